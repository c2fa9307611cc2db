/**
 * The tasks of `npm run bench:code`, each written twice: `direct(step)`, the calls an agent
 * makes turn by turn (`step` takes one turn's calls, in parallel, by their /mcp names, and
 * answers their values: `structuredContent`, else the text, parsed when JSON, as a program
 * gets them), ending in the answer it works out; and `program`, what it writes in code
 * mode. Both run for real through the gateway and must answer the same value. `searches`
 * are what the agent asks sys___search_tools before (search and code modes).
 *
 * The helpers below read server-filesystem's and server-everything's texts; the programs
 * get the same ones, as their source text, so both sides read a result the same way.
 */
function textOf(r) {
  return typeof r === "string" ? r : r.content;
}
function rootOf(r) {
  return textOf(r)
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l.startsWith("/"));
}
function linesOf(r) {
  return textOf(r).split("\n").filter(Boolean);
}
function filesOf(r) {
  return linesOf(r)
    .filter((l) => l.startsWith("[FILE]"))
    .map((l) => l.slice(7).trim().split(/\s+/)[0]);
}
function sumOf(r) {
  return Number(/is (-?\d+)/.exec(textOf(r))[1]);
}
const HELPERS = [textOf, rootOf, linesOf, filesOf, sumOf].map(String).join("\n");
const FS = "filesystem___";
const read = (path, extra = {}) => [`${FS}read_text_file`, { path, ...extra }];

/** The task's own logic over file texts, shared by both sides (a program gets its source). */
const todoOwners = (texts) => {
  const owners = {};
  for (const text of texts) for (const m of text.matchAll(/TODO\((\w+)\)/g)) owners[m[1]] = (owners[m[1]] ?? 0) + 1;
  return owners;
};
const regionTotals = (texts) => {
  const totals = {};
  for (const text of texts)
    for (const row of text.split("\n").slice(1).filter(Boolean)) {
      const [, region, amount] = row.split(",");
      totals[region] = (totals[region] ?? 0) + Number(amount);
    }
  return totals;
};
const errorCodes = (texts) => {
  const codes = {};
  for (const text of texts) for (const m of text.matchAll(/ERROR (E\d+)/g)) codes[m[1]] = (codes[m[1]] ?? 0) + 1;
  return codes;
};
const LOGIC = [todoOwners, regionTotals, errorCodes].map((f) => `const ${f.name} = ${f}`).join(";\n");

/** A program: the helpers, then `body`. */
const program = (body) => `${HELPERS}\n${LOGIC};\n${body.trim()}`;

export const TASKS = [
  {
    name: "todo-owners",
    searches: ["search files by pattern", "read text file"],
    direct: async (step) => {
      const [dirs] = await step([[`${FS}list_allowed_directories`, {}]]);
      const [found] = await step([[`${FS}search_files`, { path: rootOf(dirs), pattern: "**/*.ts" }]]);
      const texts = await step(linesOf(found).map((p) => read(p)));
      return todoOwners(texts.map(textOf));
    },
    program: program(`
const root = rootOf(await tools.filesystem.list_allowed_directories({}));
const found = await tools.filesystem.search_files({ path: root, pattern: "**/*.ts" });
const texts = await Promise.all(linesOf(found).map((path) => tools.filesystem.read_text_file({ path })));
return todoOwners(texts.map(textOf));`),
  },
  {
    name: "sales-by-region",
    searches: ["list directory", "read text file"],
    direct: async (step) => {
      const root = rootOf((await step([[`${FS}list_allowed_directories`, {}]]))[0]);
      const [listed] = await step([[`${FS}list_directory`, { path: `${root}/data` }]]);
      const csvs = filesOf(listed).filter((f) => f.endsWith(".csv"));
      return regionTotals((await step(csvs.map((f) => read(`${root}/data/${f}`)))).map(textOf));
    },
    program: program(`
const root = rootOf(await tools.filesystem.list_allowed_directories({}));
const csvs = filesOf(await tools.filesystem.list_directory({ path: root + "/data" })).filter((f) => f.endsWith(".csv"));
const texts = await Promise.all(csvs.map((f) => tools.filesystem.read_text_file({ path: root + "/data/" + f })));
return regionTotals(texts.map(textOf));`),
  },
  {
    name: "error-codes",
    searches: ["search files by pattern", "read text file"],
    direct: async (step) => {
      const root = rootOf((await step([[`${FS}list_allowed_directories`, {}]]))[0]);
      const [found] = await step([[`${FS}search_files`, { path: root, pattern: "**/*.log" }]]);
      return errorCodes((await step(linesOf(found).map((p) => read(p)))).map(textOf));
    },
    program: program(`
const root = rootOf(await tools.filesystem.list_allowed_directories({}));
const found = await tools.filesystem.search_files({ path: root, pattern: "**/*.log" });
const texts = await Promise.all(linesOf(found).map((path) => tools.filesystem.read_text_file({ path })));
return errorCodes(texts.map(textOf));`),
  },
  {
    name: "doc-headings",
    searches: ["list directory", "read text file"],
    direct: async (step) => {
      const root = rootOf((await step([[`${FS}list_allowed_directories`, {}]]))[0]);
      const files = filesOf((await step([[`${FS}list_directory`, { path: `${root}/docs` }]]))[0]);
      const texts = await step(files.map((f) => read(`${root}/docs/${f}`)));
      return Object.fromEntries(files.map((f, i) => [f, linesOf(texts[i]).filter((l) => l.startsWith("# "))]));
    },
    program: program(`
const root = rootOf(await tools.filesystem.list_allowed_directories({}));
const files = filesOf(await tools.filesystem.list_directory({ path: root + "/docs" }));
const texts = await Promise.all(files.map((f) => tools.filesystem.read_text_file({ path: root + "/docs/" + f })));
return Object.fromEntries(files.map((f, i) => [f, linesOf(texts[i]).filter((l) => l.startsWith("# "))]));`),
  },
  {
    name: "debug-configs",
    searches: ["search files by pattern", "read text file"],
    direct: async (step) => {
      const root = rootOf((await step([[`${FS}list_allowed_directories`, {}]]))[0]);
      const [found] = await step([[`${FS}search_files`, { path: `${root}/config`, pattern: "*.json" }]]);
      const texts = await step(linesOf(found).map((p) => read(p)));
      return texts
        .map((t) => JSON.parse(textOf(t)))
        .filter((c) => c.debug)
        .map((c) => c.name)
        .sort();
    },
    program: program(`
const root = rootOf(await tools.filesystem.list_allowed_directories({}));
const found = await tools.filesystem.search_files({ path: root + "/config", pattern: "*.json" });
const texts = await Promise.all(linesOf(found).map((path) => tools.filesystem.read_text_file({ path })));
return texts.map((t) => JSON.parse(textOf(t))).filter((c) => c.debug).map((c) => c.name).sort();`),
  },
  {
    name: "largest-csv-head",
    searches: ["list directory with sizes", "read text file"],
    direct: async (step) => {
      const root = rootOf((await step([[`${FS}list_allowed_directories`, {}]]))[0]);
      const [sized] = await step([[`${FS}list_directory_with_sizes`, { path: `${root}/data`, sortBy: "size" }]]);
      const largest = filesOf(sized)[0];
      const [head] = await step([read(`${root}/data/${largest}`, { head: 3 })]);
      return { largest, head: linesOf(head) };
    },
    program: program(`
const root = rootOf(await tools.filesystem.list_allowed_directories({}));
const sized = await tools.filesystem.list_directory_with_sizes({ path: root + "/data", sortBy: "size" });
const largest = filesOf(sized)[0];
const head = await tools.filesystem.read_text_file({ path: root + "/data/" + largest, head: 3 });
return { largest, head: linesOf(head) };`),
  },
  {
    name: "last-errors",
    searches: ["search files by pattern", "read text file tail"],
    direct: async (step) => {
      const root = rootOf((await step([[`${FS}list_allowed_directories`, {}]]))[0]);
      const [found] = await step([[`${FS}search_files`, { path: root, pattern: "**/*.log" }]]);
      const tails = await step(linesOf(found).map((p) => read(p, { tail: 40 })));
      return tails.map(
        (t) =>
          linesOf(t)
            .filter((l) => l.includes("ERROR"))
            .at(-1) ?? null,
      );
    },
    program: program(`
const root = rootOf(await tools.filesystem.list_allowed_directories({}));
const found = await tools.filesystem.search_files({ path: root, pattern: "**/*.log" });
const tails = await Promise.all(linesOf(found).map((path) => tools.filesystem.read_text_file({ path, tail: 40 })));
return tails.map((t) => linesOf(t).filter((l) => l.includes("ERROR")).at(-1) ?? null);`),
  },
  {
    name: "team-note",
    searches: ["read text file", "write file"],
    direct: async (step) => {
      const root = rootOf((await step([[`${FS}list_allowed_directories`, {}]]))[0]);
      const people = JSON.parse(textOf((await step([read(`${root}/data/people.json`)]))[0]));
      const content = people.map((p) => `${p.name} (${p.role}, ${p.team})`).join("\n");
      await step([[`${FS}write_file`, { path: `${root}/team.txt`, content }]]);
      return linesOf((await step([read(`${root}/team.txt`)]))[0]);
    },
    program: program(`
const root = rootOf(await tools.filesystem.list_allowed_directories({}));
const people = JSON.parse(textOf(await tools.filesystem.read_text_file({ path: root + "/data/people.json" })));
const content = people.map((p) => p.name + " (" + p.role + ", " + p.team + ")").join("\\n");
await tools.filesystem.write_file({ path: root + "/team.txt", content });
return linesOf(await tools.filesystem.read_text_file({ path: root + "/team.txt" }));`),
  },
  {
    name: "people-into-memory",
    searches: ["read text file", "create entities in the knowledge graph", "create relations", "open nodes"],
    direct: async (step) => {
      const root = rootOf((await step([[`${FS}list_allowed_directories`, {}]]))[0]);
      const people = JSON.parse(textOf((await step([read(`${root}/data/people.json`)]))[0]));
      const entities = people.map((p) => ({
        name: p.name,
        entityType: "person",
        observations: [p.role, `team ${p.team}`],
      }));
      await step([["memory___create_entities", { entities }]]);
      const relations = people.flatMap((a) =>
        people
          .filter((b) => b.team === a.team && b.name > a.name)
          .map((b) => ({ from: a.name, to: b.name, relationType: "works_with" })),
      );
      await step([["memory___create_relations", { relations }]]);
      const [graph] = await step([["memory___open_nodes", { names: people.map((p) => p.name) }]]);
      return { people: graph.entities.length, relations: graph.relations.length };
    },
    program: program(`
const root = rootOf(await tools.filesystem.list_allowed_directories({}));
const people = JSON.parse(textOf(await tools.filesystem.read_text_file({ path: root + "/data/people.json" })));
const entities = people.map((p) => ({ name: p.name, entityType: "person", observations: [p.role, "team " + p.team] }));
await tools.memory.create_entities({ entities });
const relations = people.flatMap((a) =>
  people
    .filter((b) => b.team === a.team && b.name > a.name)
    .map((b) => ({ from: a.name, to: b.name, relationType: "works_with" })));
await tools.memory.create_relations({ relations });
const graph = await tools.memory.open_nodes({ names: people.map((p) => p.name) });
return { people: graph.entities.length, relations: graph.relations.length };`),
  },
  {
    name: "engineers-reviewed",
    searches: ["search nodes in the knowledge graph", "add observations"],
    direct: async (step) => {
      const [found] = await step([["memory___search_nodes", { query: "engineer" }]]);
      const names = found.entities.map((e) => e.name).sort();
      const observations = names.map((entityName) => ({ entityName, contents: ["reviewed the bench"] }));
      await step([["memory___add_observations", { observations }]]);
      const [opened] = await step([["memory___open_nodes", { names }]]);
      return opened.entities.map((e) => [e.name, e.observations.length]).sort();
    },
    program: program(`
const found = await tools.memory.search_nodes({ query: "engineer" });
const names = found.entities.map((e) => e.name).sort();
const observations = names.map((entityName) => ({ entityName, contents: ["reviewed the bench"] }));
await tools.memory.add_observations({ observations });
const opened = await tools.memory.open_nodes({ names });
return opened.entities.map((e) => [e.name, e.observations.length]).sort();`),
  },
  {
    name: "weather-into-memory",
    searches: ["get structured content weather", "create entities", "search nodes"],
    direct: async (step) => {
      const cities = ["New York", "Chicago", "Los Angeles"];
      const weather = await step(cities.map((location) => ["everything___get-structured-content", { location }]));
      const entities = cities.map((name, i) => ({
        name,
        entityType: "city",
        observations: [`temperature ${weather[i].temperature}`, weather[i].conditions],
      }));
      await step([["memory___create_entities", { entities }]]);
      const [found] = await step([["memory___search_nodes", { query: "city" }]]);
      const warmest = cities.reduce((a, b, i) =>
        weather[i].temperature > weather[cities.indexOf(a)].temperature ? b : a,
      );
      return { cities: found.entities.filter((e) => e.entityType === "city").length, warmest };
    },
    program: program(`
const cities = ["New York", "Chicago", "Los Angeles"];
const weather = await Promise.all(cities.map((location) => tools.everything.get_structured_content({ location })));
const entities = cities.map((name, i) => ({
  name,
  entityType: "city",
  observations: ["temperature " + weather[i].temperature, weather[i].conditions],
}));
await tools.memory.create_entities({ entities });
const found = await tools.memory.search_nodes({ query: "city" });
const warmest = cities.reduce((a, b, i) => (weather[i].temperature > weather[cities.indexOf(a)].temperature ? b : a));
return { cities: found.entities.filter((e) => e.entityType === "city").length, warmest };`),
  },
  {
    name: "sum-of-numbers",
    searches: ["read text file", "add two numbers sum"],
    direct: async (step) => {
      const root = rootOf((await step([[`${FS}list_allowed_directories`, {}]]))[0]);
      let values = linesOf((await step([read(`${root}/data/numbers.txt`)]))[0]).map(Number);
      while (values.length > 1) {
        const pairs = [];
        for (let i = 0; i < values.length; i += 2)
          pairs.push(["everything___get-sum", { a: values[i], b: values[i + 1] ?? 0 }]);
        values = (await step(pairs)).map(sumOf);
      }
      return values[0];
    },
    program: program(`
const root = rootOf(await tools.filesystem.list_allowed_directories({}));
let values = linesOf(await tools.filesystem.read_text_file({ path: root + "/data/numbers.txt" })).map(Number);
while (values.length > 1) {
  const pairs = [];
  for (let i = 0; i < values.length; i += 2)
    pairs.push(tools.everything.get_sum({ a: values[i], b: values[i + 1] ?? 0 }));
  values = (await Promise.all(pairs)).map(sumOf);
}
return values[0];`),
  },
];
