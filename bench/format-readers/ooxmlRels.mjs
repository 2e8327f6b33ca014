// OOXML relationships: the part names a part's rels point at (`<dir>/_rels/<name>.rels`), resolved against the
// part's folder. Shared by readXlsx.mjs and readPptx.mjs.
import { parseXml, localName } from './safeXml.mjs';

/** Map of relationship Id → { target (a part name in the zip), type }; empty when the part has no rels. */
export async function readRels(zip, part) {
  const dir = part.slice(0, part.lastIndexOf('/') + 1);
  const path = `${dir}_rels/${part.slice(dir.length)}.rels`;
  const map = new Map();
  if (!zip.has(path)) return map;
  await parseXml(zip.stream(path), {
    open(n) {
      if (localName(n.name) === 'Relationship')
        map.set(n.attributes.Id, { target: resolvePart(dir, n.attributes.Target), type: n.attributes.Type });
    },
  });
  return map;
}

/** A rels Target against its part's folder: absolute ("/xl/...") or relative with "." and "..". */
export function resolvePart(dir, target) {
  const out = [];
  for (const s of (target.startsWith('/') ? target.slice(1) : dir + target).split('/'))
    s === '..' ? out.pop() : s !== '.' && out.push(s);
  return out.join('/');
}
