// DOCX → structured text: boundedZip (yauzl) inflates every part under the limits first; the parts are re-packed
// STORED (fflate zipSync level 0, no compression) so mammoth 1.13.0's JSZip inflates nothing and reads exactly the
// bytes that were bounded; mammoth turns Word styles (Heading 1…, lists, tables) into HTML; htmlToText makes text.
// mammoth's XML parser (@xmldom/xmldom 0.8) expands no DTD entity: a billion-laughs or XXE part fails with
// "entity not found".
import mammoth from 'mammoth';
import { zipSync } from 'fflate';
import { openBoundedZip } from './boundedZip.mjs';
import { htmlToText } from './htmlToText.mjs';

export async function boundedRepack(buffer, limits) {
  const zip = await openBoundedZip(buffer, limits);
  const files = {};
  for (const name of zip.names()) if (!name.endsWith('/')) files[name] = [await zip.read(name), { level: 0 }];
  zip.close();
  return Buffer.from(zipSync(files));
}

export async function docxToText(buffer, limits) {
  const stored = await boundedRepack(buffer, limits);
  const { value: html, messages } = await mammoth.convertToHtml({ buffer: stored }, { includeDefaultStyleMap: true });
  return { text: htmlToText(html), html, warnings: messages.length };
}
