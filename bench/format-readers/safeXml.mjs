// Safe streaming XML on saxes 6.0.0: a DOCTYPE is refused outright (OOXML and ODF parts never carry one), so no
// entity is ever declared, none expanded (billion laughs) and none fetched (XXE). saxes itself never expands a
// DTD entity nor reads a file or URL; the refusal only makes the error say so at once.
import { SaxesParser } from 'saxes';

export class XmlRefusedError extends Error {}

/**
 * Feeds an async iterable of byte chunks through saxes. handlers: { open(node), close(name), text(t) } where
 * node = { name (qualified), local, attributes: { qname: value } }. Returning false from open/close does nothing
 * special; throw to stop.
 */
export async function parseXml(chunks, handlers) {
  const p = new SaxesParser({ xmlns: false, position: false });
  let failure = null;
  p.on('doctype', () => {
    failure ??= new XmlRefusedError('the document declares a DTD (<!DOCTYPE>); XML entities are refused');
  });
  p.on('error', (e) => {
    failure ??= e;
  });
  if (handlers.open)
    p.on('opentag', (n) => {
      if (!failure) handlers.open(n);
    });
  if (handlers.close)
    p.on('closetag', (n) => {
      if (!failure) handlers.close(n.name);
    });
  if (handlers.text)
    p.on('text', (t) => {
      if (!failure) handlers.text(t);
    });
  const decoder = new TextDecoder('utf-8');
  for await (const chunk of chunks) {
    p.write(decoder.decode(chunk, { stream: true }));
    if (failure) throw failure;
    if (handlers.stopped?.()) return;
  }
  p.write(decoder.decode());
  p.close();
  if (failure) throw failure;
}

/** One-shot parse of a string (for small parts such as workbook.xml or rels). */
export function parseXmlString(xml, handlers) {
  return parseXml([Buffer.from(xml)], handlers);
}

export const localName = (q) => q.slice(q.indexOf(':') + 1);
