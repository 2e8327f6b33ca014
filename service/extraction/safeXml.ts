// Every XML part of a DOCX, ODT, PPTX or XLSX is read here, streaming, by saxes 6.0.0. A DOCTYPE is refused: OOXML
// and ODF parts never carry one, so no entity is ever declared — none expanded (billion laughs) and none fetched
// (XXE). saxes itself expands no DTD entity and reads no file or URL; the refusal makes the error say why at once.
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { DocumentReadError } from '../errors.ts';
import type { BoundedZip } from './boundedZip.ts';

/** Called as saxes reads; a handler that throws stops the part there, and its inflation with it. */
export interface XmlHandlers {
  open?(tag: SaxesTagPlain): void;
  close?(name: string): void;
  text?(text: string): void;
}

/** The part of a qualified name after its prefix ("w:p" → "p"). */
export function localName(qualified: string): string {
  return qualified.slice(qualified.indexOf(':') + 1);
}

/** Streams one part of the zip through saxes; `kind` ("DOCX") names the file in errors. */
export async function parseXmlPart(zip: BoundedZip, part: string, kind: string, handlers: XmlHandlers): Promise<void> {
  const parser = new SaxesParser({ xmlns: false, position: false });
  let failure: Error | null = null;
  parser.on('doctype', () => {
    failure ??= DocumentReadError.xmlRefused(part);
  });
  parser.on('error', (error) => {
    failure ??= DocumentReadError.corrupt(kind, `${part}: ${error.message}`);
  });
  parser.on('opentag', (tag) => {
    if (!failure) handlers.open?.(tag);
  });
  parser.on('closetag', (tag) => {
    if (!failure) handlers.close?.(tag.name);
  });
  parser.on('text', (text) => {
    if (!failure) handlers.text?.(text);
  });
  const decoder = new TextDecoder('utf-8');
  const chunks = zip.stream(part);
  for await (const chunk of chunks) {
    parser.write(decoder.decode(chunk, { stream: true }));
    if (failure) throw failure;
  }
  parser.write(decoder.decode());
  parser.close();
  if (failure) throw failure;
}

/** An OOXML part's relationships: Id → { target (a part name in the zip), type }; empty when it has none. */
export async function readRelationships(
  zip: BoundedZip,
  part: string,
  kind: string,
): Promise<Map<string, { target: string; type: string }>> {
  const folder = part.slice(0, part.lastIndexOf('/') + 1);
  const path = `${folder}_rels/${part.slice(folder.length)}.rels`;
  const relationships = new Map<string, { target: string; type: string }>();
  if (!zip.has(path)) return relationships;
  await parseXmlPart(zip, path, kind, {
    open(tag) {
      if (localName(tag.name) !== 'Relationship') return;
      const { Id, Target, Type } = tag.attributes;
      if (Id && Target) relationships.set(Id, { target: resolvePart(folder, Target), type: Type ?? '' });
    },
  });
  return relationships;
}

/** A relationship's Target against its part's folder: absolute ("/xl/…") or relative with "." and "..". */
export function resolvePart(folder: string, target: string): string {
  const out: string[] = [];
  for (const segment of (target.startsWith('/') ? target.slice(1) : folder + target).split('/')) {
    if (segment === '..') out.pop();
    else if (segment !== '.' && segment !== '') out.push(segment);
  }
  return out.join('/');
}
