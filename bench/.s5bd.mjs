import { loadSource } from "./lib/bundle-src.ts";
import { githubLikePayload } from "./lib/payloads.ts";
const m = await loadSource('export { retainText, prepareKeep } from "./src/policy/retain-text.ts"; export { buildTree } from "./src/policy/retain.ts"; export { skipValue } from "./src/core/raw-json.ts";');
const payload = githubLikePayload(1024*1024); const pt = JSON.stringify(payload);
const resp = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: pt }], structuredContent: payload } });
const keep = m.prepareKeep(m.buildTree(["/total_count", "/items/*/number", "/items/*/title", "/items/*/state", "/items/*/user/login", "/items/*/labels/*/name", "/items/*/comments"]));
const start = resp.indexOf('"text":"') + 7; const sStart = resp.indexOf('"structuredContent":') + 20;
const t=(f)=>{const s=process.hrtime.bigint(); f(); return Number(process.hrtime.bigint()-s)/1e6};
const R={parse:[],decode:[],project:[],compare:[],skim:[]}; let dec, pr;
for (let r=0;r<200;r++){
  R.parse.push(t(()=>JSON.parse(resp)));
  R.decode.push(t(()=>{const g=resp.indexOf('"}],"structuredContent":', start+1); dec=JSON.parse(resp.slice(start, g+1));}));
  R.project.push(t(()=>{pr=m.retainText(resp, sStart, keep)}));
  R.compare.push(t(()=>dec===resp.slice(sStart, pr.end)));
  R.skim.push(t(()=>m.skipValue(resp, sStart)));
}
const med=(v)=>v.sort((a,b)=>a-b)[v.length>>1];
console.log(Object.entries(R).map(([k,v])=>k+" "+med(v).toFixed(3)).join("  "));
