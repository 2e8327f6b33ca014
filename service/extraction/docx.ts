// DOCX → structured text, one section per heading. mammoth 1.13.0 maps Word's styles to structure (Heading 1… → `#`,
// numbered and bulleted lists, tables, footnotes) as HTML, which htmlText.ts writes out. mammoth's own zip layer
// (JSZip) has no bound, so every part is first read through boundedZip and re-packed STORED (fflate 0.8.3, level 0):
// JSZip then inflates nothing and sees exactly the bytes that were bounded. mammoth's XML parser (xmldom) expands no
// DTD entity; a part with a DOCTYPE fails there ("entity not found"). Costs: docs/format-readers-research.md.
import mammoth from 'mammoth';
import { zipSync, type Zippable } from 'fflate';
import { DocumentReadError } from '../errors.ts';
import { openBoundedZip, type ZipLimits } from './boundedZip.ts';
import { sectionsByHeading, type ExtractedDocument } from './documents.ts';
import { htmlToMarkdown } from './htmlText.ts';

/** An XML part holding this is refused before mammoth sees it (a comment holding it too: no real part has one). */
const DOCTYPE = Buffer.from('<!DOCTYPE');

/**
 * The zip's parts inflated under the bounds, re-packed without compression. An XML part declaring a DTD is refused
 * here, as safeXml.ts refuses it for the other kinds, so the error names the cause rather than mammoth's "entity not
 * found".
 */
export async function boundedRepack(bytes: Buffer, limits: ZipLimits, kind: string): Promise<Buffer> {
  const zip = await openBoundedZip(bytes, limits, kind);
  try {
    const files: Zippable = {};
    for (const name of zip.names()) {
      const part = await zip.read(name);
      if ((name.endsWith('.xml') || name.endsWith('.rels')) && part.includes(DOCTYPE))
        throw DocumentReadError.xmlRefused(name);
      files[name] = [part, { level: 0 }];
    }
    return Buffer.from(zipSync(files));
  } finally {
    zip.close();
  }
}

export async function readDocx(bytes: Buffer, limits: ZipLimits): Promise<ExtractedDocument> {
  const stored = await boundedRepack(bytes, limits, 'DOCX');
  let html: string;
  try {
    ({ value: html } = await mammoth.convertToHtml({ buffer: stored }));
  } catch (error) {
    throw DocumentReadError.corrupt('DOCX', (error as Error).message);
  }
  return { sections: sectionsByHeading(htmlToMarkdown(html), 'Document') };
}
