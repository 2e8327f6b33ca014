// Writes the hostile inputs into ./out/hostile/ (fflate 0.8.3 streams the deflate, so nothing big is held):
//   bomb.docx          word/document.xml inflates to 1 GiB from ~1 MB (honest headers)
//   bomb-lying.docx    the same, but the central directory claims document.xml is 4 KiB
//   laughs.docx        word/document.xml carries a billion-laughs DTD (10 levels x 10)
//   xxe.docx           word/document.xml declares an external entity for /etc/passwd and uses it
//   laughs.xml, xxe.xml   the same two parts on their own
//   rows-1m.csv        1,000,000 rows x 4 columns (25.5 MB)
//   rows-1m.xlsx       one sheet of 1,000,000 rows x 4 columns (shared-string header, inline strings, numbers)
// Usage: node makeHostile.mjs [--skip-bomb] [--skip-xlsx] [--skip-csv]
import fs from 'node:fs';
import { Zip, ZipDeflate, ZipPassThrough, strToU8 } from 'fflate';

const dir = new URL('./out/hostile/', import.meta.url);
fs.mkdirSync(dir, { recursive: true });

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const docxParts = {
  '[Content_Types].xml': `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
  '_rels/.rels': `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
};

/** Writes a zip whose parts are strings or chunk generators, streaming, to a file. */
async function writeZip(file, parts) {
  const out = fs.createWriteStream(file);
  let pending = Promise.resolve();
  const zip = new Zip((err, data, final) => {
    if (err) throw err;
    out.write(data);
    if (final) out.end();
  });
  for (const [name, body] of Object.entries(parts)) {
    const f = new ZipDeflate(name, { level: 9 });
    zip.add(f);
    if (typeof body === 'string') f.push(strToU8(body), true);
    else {
      let prev = null;
      for (const chunk of body()) {
        if (prev) f.push(prev);
        prev = chunk;
      }
      f.push(prev ?? new Uint8Array(0), true);
    }
  }
  zip.end();
  await new Promise((r) => out.on('finish', r));
  void pending;
}

function docxWith(documentXml) {
  return { ...docxParts, 'word/document.xml': documentXml };
}

const laughs =
  '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n' +
  Array.from({ length: 9 }, (_, i) => ` <!ENTITY lol${i + 1} "${`&lol${i || ''};`.repeat(10)}">`).join('\n') +
  '\n]>\n';
const laughsDoc = `${laughs}<w:document xmlns:w="${W}"><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>`;
const xxeDoc = `<?xml version="1.0"?>\n<!DOCTYPE d [ <!ENTITY xxe SYSTEM "file:///etc/passwd"> ]>\n<w:document xmlns:w="${W}"><w:body><w:p><w:r><w:t>before &xxe; after</w:t></w:r></w:p></w:body></w:document>`;
fs.writeFileSync(new URL('laughs.xml', dir), laughsDoc);
fs.writeFileSync(new URL('xxe.xml', dir), xxeDoc);
await writeZip(new URL('laughs.docx', dir), docxWith(laughsDoc));
await writeZip(new URL('xxe.docx', dir), docxWith(xxeDoc));

if (!process.argv.includes('--skip-bomb')) {
  const GiB = 1024 ** 3;
  const head = `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="${W}"><w:body><w:p><w:r><w:t>`;
  const tail = '</w:t></w:r></w:p></w:body></w:document>';
  const block = new Uint8Array(1 << 20).fill(0x61); // 1 MiB of "a"
  await writeZip(new URL('bomb.docx', dir), {
    ...docxParts,
    'word/document.xml': function* () {
      yield strToU8(head);
      for (let i = 0; i < GiB / block.length; i++) yield block;
      yield strToU8(tail);
    },
  });
  // The lying variant: patch every central-directory record's uncompressed size of document.xml to 4096.
  const buf = fs.readFileSync(new URL('bomb.docx', dir));
  for (let i = buf.length - 22; i >= 0; i--) {
    if (buf.readUInt32LE(i) !== 0x02014b50) continue;
    const nameLen = buf.readUInt16LE(i + 28);
    const name = buf.toString('utf8', i + 46, i + 46 + nameLen);
    if (name === 'word/document.xml') buf.writeUInt32LE(4096, i + 24);
  }
  fs.writeFileSync(new URL('bomb-lying.docx', dir), buf);
}

if (!process.argv.includes('--skip-xlsx')) {
  const S = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
  const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
  const rows = 1_000_000;
  const cols = ['Item', 'Region', 'Quantity', 'Price'];
  await writeZip(new URL('rows-1m.xlsx', dir), {
    '[Content_Types].xml': `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>`,
    '_rels/.rels': `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    'xl/workbook.xml': `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<workbook xmlns="${S}" xmlns:r="${R}"><sheets><sheet name="Orders" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    'xl/_rels/workbook.xml.rels': `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
    'xl/sharedStrings.xml': `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<sst xmlns="${S}" count="4" uniqueCount="4">${cols.map((c) => `<si><t>${c}</t></si>`).join('')}</sst>`,
    'xl/worksheets/sheet1.xml': function* () {
      yield strToU8(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<worksheet xmlns="${S}"><sheetData><row r="1">${cols.map((_, i) => `<c r="${'ABCD'[i]}1" t="s"><v>${i}</v></c>`).join('')}</row>`);
      const regions = ['North', 'South', 'East', 'West'];
      let batch = '';
      for (let r = 2; r <= rows + 1; r++) {
        batch += `<row r="${r}"><c r="A${r}" t="inlineStr"><is><t>Item ${r}</t></is></c><c r="B${r}" t="inlineStr"><is><t>${regions[r % 4]}</t></is></c><c r="C${r}"><v>${r % 97}</v></c><c r="D${r}"><v>${(r % 1000) / 10}</v></c></row>`;
        if (batch.length > 1 << 20) {
          yield strToU8(batch);
          batch = '';
        }
      }
      yield strToU8(batch + '</sheetData></worksheet>');
    },
  });
}
if (!process.argv.includes('--skip-csv')) {
  const out = fs.createWriteStream(new URL('rows-1m.csv', dir));
  out.write('Item,Region,Quantity,Price\n');
  for (let r = 0; r < 1_000_000; r += 10_000) {
    let batch = '';
    for (let i = r; i < r + 10_000; i++) batch += `Item ${i},North,${i % 97},${(i % 1000) / 10}\n`;
    if (!out.write(batch)) await new Promise((res) => out.once('drain', res));
  }
  out.end();
  await new Promise((res) => out.on('finish', res));
}
for (const f of fs.readdirSync(dir)) console.log(f, fs.statSync(new URL(f, dir)).size);
