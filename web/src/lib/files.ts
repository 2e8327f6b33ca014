// What the ingestion endpoint accepts, checked before reading a file so a refusal names the file at once.
export const ACCEPTED_EXTENSIONS = ['.txt', '.text', '.md', '.markdown'] as const;
export const ACCEPT_ATTRIBUTE = ACCEPTED_EXTENSIONS.join(',');
/** The server's limit on `content`: 5 MiB. */
export const MAX_DOCUMENT_BYTES = 5 * 1024 * 1024;

export function hasAcceptedExtension(filename: string): boolean {
  const lower = filename.toLowerCase();
  return ACCEPTED_EXTENSIONS.some((extension) => lower.endsWith(extension) && lower.length > extension.length);
}

export interface FileCheck {
  accepted: File[];
  wrongType: File[];
  tooLarge: File[];
}

export function checkFiles(files: Iterable<File>): FileCheck {
  const check: FileCheck = { accepted: [], wrongType: [], tooLarge: [] };
  for (const file of files) {
    if (!hasAcceptedExtension(file.name)) check.wrongType.push(file);
    else if (file.size > MAX_DOCUMENT_BYTES) check.tooLarge.push(file);
    else check.accepted.push(file);
  }
  return check;
}

/** Refusals as sentences that name every refused file, or [] when nothing was refused. */
export function refusalMessages(check: FileCheck): string[] {
  const messages: string[] = [];
  if (check.wrongType.length > 0) {
    messages.push(
      `Not uploaded: ${names(check.wrongType)}. Only .txt, .text, .md and .markdown files are accepted.`,
    );
  }
  if (check.tooLarge.length > 0) {
    messages.push(`Not uploaded: ${names(check.tooLarge)}. A document can be at most 5 MiB.`);
  }
  return messages;
}

function names(files: File[]): string {
  return files.map((file) => file.name).join(', ');
}
