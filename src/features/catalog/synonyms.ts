/**
 * The bridge from the words people say to the words tools use: general English families
 * of verbs and nouns ("bookmark" → star, "inbox" → notification, "folder" → directory),
 * read by vocabulary.ts. Not answers to particular tasks: a word here must hold for any
 * catalog that has tools of that kind.
 */

/**
 * What users say, and the words tools use for it: one family a line, the word as typed
 * (lower case, before stemming; a phrase written as one word, see PHRASES in
 * vocabulary.ts), then the words it stands for. Kept as text rather than an object
 * literal: it is about half the bytes in the Worker's bundle.
 */
const TABLE = `
shipit merge
ship merge deploy
land merge
bookmark star
favorite star
favourite star
like star
inbox notification
notify notification
alerts notification
unread notification
bug issue
report create issue
bugs issue
ticket issue
tickets issue
pr pull request
prs pull request
mr merge request
close update state close
reopen update state
rename update edit move
change update edit
modify update edit
edit update edit
make create
new create
add create add sum
open create open navigate
write create write
remove delete remove
erase delete
drop delete
show get list read
see get list read
view get read
display get list
fetch get read
look search get find
find search find
lookup search get find
reviewed review
reviewer review
approve review approve
approved review approve
teammate user member
colleague user member
people user member
member user member
members user member
account user whoami
accounts user
logged whoami user
person user
dm message send
tell message send post
say message post
reply reply thread comment
website navigate browser page
site navigate browser page
webpage navigate browser page
url navigate url
visit navigate
go navigate
press click key press
tap click
enter type fill
picture screenshot image
capture screenshot
repo repository repo
repos repository repo
project repository project
doc page document
docs page document
wiki page
note page comment
ci workflow run action
pipeline workflow run
build workflow run
crash error issue event
occurrence event
occurrences event
exception error issue event
pay payment
charge payment charge
bill invoice
db database table sql
sql sql query execute
rain weather forecast
sunny weather forecast
temperature weather forecast
tomorrow forecast
codebase code
function code
defined code definition
definition code definition
remember memory observation entity
forget delete entity
fact observation
entity entity node
entities entity node
facts observation
record create observation
link relation link
drive directions driving
walk directions walking
car directions driving
train directions transit
bus directions transit
transit directions transit
far distance
hours place details
phone place details
restaurant place
restaurants place local
station place local
stations place local
dentist place local
dentists place local
hotel place local
hotels place local
folder directory folder
folders directory folder
biggest size
big size
largest size
large size
smallest size
save write create
overwrite write update
paragraph block
append add children block
label update label
key dsn key
generate create
list list find
exist find list
today recent history
watch subscription watch
subscribe subscription subscribe
repeat echo
high elevation
height elevation
altitude elevation
coordinates geocode latitude longitude
latitude geocode
longitude geocode
address geocode address
popup dialog
modal dialog
alert dialog notification
near local place
nearby local place
cause analyze
diagnose analyze
explain analyze
saying message history
said message history
yesterday recent history
earlier recent history
morning recent history
check get status
inspect get read
examine get read
browse navigate list
load navigate read
download read get
attach upload attachment
sort query sort
rows query
row query
filter query filter search
combine merge
commit push commit
copy fork copy
clone fork
duplicate fork copy
publish release deploy
deploy deploy release
assign update assignee
tag label tag
react reaction emoji
emoji reaction
thumbs reaction
upvote reaction
answer reply
respond reply
message message send post
ping message send
chat message channel
announce post message
choose select option
pick select option
dropdown select option
mouse hover click
screen screenshot snapshot
snap screenshot
photo image media screenshot
image image media
video media
audio media
trace event trace
window resize browser
viewport resize
mobile resize emulate
dark emulate media
theme emulate media
compress gzip
zip gzip
documentation docs doc
conversation message history
discussion thread comment
feedback comment review
problem issue error
defect issue
failure error issue
diff files commit diff
checks status
green status
passing status
tests status
employee user member
profile profile user
org organization
orgs organization
company organization
workspace organization user
token key dsn
credentials key dsn
version release version
env env environment
environment env environment
variables env
shop place local
store place local
cafe place local
business place local
route directions
miles distance
km distance
location geocode place
library library docs
package library
framework library
sdk library docs
internet web search
online web search
news web search news
google web search
run run execute evaluate
execute execute run evaluate
grep search code
script code script
print get read
dump read get list
grab get read
cat read
bump update
mark update
trash delete
discard delete
purge delete
wipe delete
destroy delete
draft create write
compose create write
setup create
enable toggle update
disable toggle update
`;

const LINES = TABLE.split("\n").filter((line) => line !== "");

/** The table read: each word people say, and the words tools use for it. */
export const SYNONYMS: ReadonlyMap<string, readonly string[]> = new Map(
  LINES.map((line) => {
    const [word, ...synonyms] = line.split(" ");
    return [word!, synonyms];
  }),
);

/** The first word of every line, in order (a word written twice is a mistake: tests). */
export const TABLE_WORDS = (): string[] => LINES.map((line) => line.split(" ")[0]!);
