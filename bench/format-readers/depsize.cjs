// transitive deps + on-disk size per top-level package, resolved in this node_modules
const fs = require('fs'),
  path = require('path');
function dirSize(d) {
  let s = 0;
  for (const e of fs.readdirSync(d, { withFileTypes: true })) {
    const p = path.join(d, e.name);
    if (e.isDirectory()) {
      if (e.name === 'node_modules') continue;
      s += dirSize(p);
    } else s += fs.lstatSync(p).size;
  }
  return s;
}
function resolveDir(name, from) {
  let d = from;
  while (true) {
    const c = path.join(d, 'node_modules', name);
    if (fs.existsSync(c)) return c;
    const up = path.dirname(d);
    if (up === d) return null;
    d = up;
  }
}
for (const top of process.argv.slice(2)) {
  const seen = new Map();
  const st = [resolveDir(top, __dirname)];
  while (st.length) {
    const d = st.pop();
    if (!d || seen.has(d)) continue;
    const pj = JSON.parse(fs.readFileSync(d + '/package.json'));
    seen.set(d, pj.name);
    for (const dep of Object.keys({ ...pj.dependencies, ...pj.optionalDependencies })) st.push(resolveDir(dep, d));
  }
  let size = 0;
  for (const d of seen.keys()) size += dirSize(d);
  console.log(`${top}\t${seen.size - 1} transitive deps\t${(size / 1048576).toFixed(1)} MiB`);
}
