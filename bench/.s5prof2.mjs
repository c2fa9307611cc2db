import { loadSource } from "./lib/bundle-src.ts";
import { githubLikePayload } from "./lib/payloads.ts";
const m = await loadSource('export { filterAnswer } from "./src/policy/filter-answer.ts"; export { checkFilterSet } from "./src/policy/filter-set.ts";');
const payload = githubLikePayload(1024*1024); const pt = JSON.stringify(payload);
const resp = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: pt }], structuredContent: payload } });
const rule = m.checkFilterSet("b", { tools: { t: { retain: ["/total_count", "/items/*/number", "/items/*/title", "/items/*/state", "/items/*/user/login", "/items/*/labels/*/name", "/items/*/comments"], patches: [{ op: "add", path: "/note", value: "x" }] } } }).value.tools.t;
const t=(f)=>{const s=process.hrtime.bigint(); f(); return Number(process.hrtime.bigint()-s)/1e6};
const A=[],B=[];
for (let r=0;r<300;r++){ A.push(t(()=>JSON.parse(resp))); B.push(t(()=>m.filterAnswer(resp,1,rule,"b"))); }
const med=(v)=>v.sort((a,b)=>a-b)[v.length>>1];
console.log(med(A).toFixed(2), med(B).toFixed(2), (med(B)/med(A)).toFixed(2));
