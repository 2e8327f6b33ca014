// Writes a scanned-style PDF (no text layer): one page per JPEG, each page one DCTDecode image XObject, as a
// scanner writes. Usage: node makeScanPdf.mjs out.pdf page1.jpg page2.jpg ...  (JPEG size read from its SOF marker)
import fs from 'node:fs';
const [out, ...jpgs] = process.argv.slice(2);
function size(b) {
  for (let i = 2; i < b.length;) {
    const m = b[i + 1],
      len = b.readUInt16BE(i + 2);
    if (m >= 0xc0 && m <= 0xc3) return { h: b.readUInt16BE(i + 5), w: b.readUInt16BE(i + 7), comps: b[i + 9] };
    i += 2 + len;
  }
  throw new Error('no SOF');
}
const objs = [];
const add = (body) => objs.push(body) && objs.length;
const pagesId = 2;
add('<< /Type /Catalog /Pages 2 0 R >>');
add(null);
const kids = [];
for (const f of jpgs) {
  const b = fs.readFileSync(f);
  const { w, h, comps } = size(b);
  const img = add([
    `<< /Type /XObject /Subtype /Image /Width ${w} /Height ${h} /ColorSpace /${comps === 1 ? 'DeviceGray' : 'DeviceRGB'} /BitsPerComponent 8 /Filter /DCTDecode /Length ${b.length} >>\nstream\n`,
    b,
    '\nendstream',
  ]);
  const pw = (w / 300) * 72,
    ph = (h / 300) * 72;
  const content = `q ${pw.toFixed(2)} 0 0 ${ph.toFixed(2)} 0 0 cm /Im0 Do Q`;
  const c = add(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
  kids.push(
    add(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${pw.toFixed(2)} ${ph.toFixed(2)}] /Resources << /XObject << /Im0 ${img} 0 R >> >> /Contents ${c} 0 R >>`,
    ),
  );
}
objs[pagesId - 1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`;
const parts = [Buffer.from('%PDF-1.4\n')];
let off = parts[0].length;
const xref = [];
objs.forEach((o, i) => {
  xref.push(off);
  const chunks = [`${i + 1} 0 obj\n`, ...(Array.isArray(o) ? o : [o]), '\nendobj\n'].map((x) =>
    Buffer.isBuffer(x) ? x : Buffer.from(x),
  );
  for (const c of chunks) (parts.push(c), (off += c.length));
});
const xs = `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n${xref.map((x) => `${String(x).padStart(10, '0')} 00000 n \n`).join('')}trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${off}\n%%EOF\n`;
parts.push(Buffer.from(xs));
fs.writeFileSync(out, Buffer.concat(parts));
