// The table of contents of a ZIP archive (its central directory): the names and sizes of its
// entries, read without unpacking anything. Sniffing asks it whether a ZIP is a DOCX (it holds
// `word/document.xml`); extraction asks how large the entries would be unpacked before it lets
// a library unpack them, so a small file that unpacks to gigabytes is refused.

export interface ZipEntry {
  name: string;
  compressedBytes: number;
  uncompressedBytes: number;
}

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_DIRECTORY_ENTRY = 0x02014b50;
const END_RECORD_BYTES = 22;
const MAX_COMMENT_BYTES = 0xffff;

/** The entries of the archive; null when the bytes are not a ZIP this can read (ZIP64 included). */
export function zipEntries(bytes: Buffer): ZipEntry[] | null {
  if (bytes.length < END_RECORD_BYTES) return null;
  let end = -1;
  const lowest = Math.max(0, bytes.length - END_RECORD_BYTES - MAX_COMMENT_BYTES);
  for (let offset = bytes.length - END_RECORD_BYTES; offset >= lowest; offset -= 1) {
    if (bytes.readUInt32LE(offset) === END_OF_CENTRAL_DIRECTORY) {
      end = offset;
      break;
    }
  }
  if (end < 0) return null;
  const count = bytes.readUInt16LE(end + 10);
  const size = bytes.readUInt32LE(end + 12);
  const start = bytes.readUInt32LE(end + 16);
  // ZIP64 archives mark these fields as 0xFFFF / 0xFFFFFFFF; no DOCX needs one.
  if (count === 0xffff || size === 0xffffffff || start === 0xffffffff || start + size > end) return null;
  const entries: ZipEntry[] = [];
  let offset = start;
  for (let index = 0; index < count; index += 1) {
    if (offset + 46 > end || bytes.readUInt32LE(offset) !== CENTRAL_DIRECTORY_ENTRY) return null;
    const compressedBytes = bytes.readUInt32LE(offset + 20);
    const uncompressedBytes = bytes.readUInt32LE(offset + 24);
    const nameLength = bytes.readUInt16LE(offset + 28);
    const extraLength = bytes.readUInt16LE(offset + 30);
    const commentLength = bytes.readUInt16LE(offset + 32);
    if (offset + 46 + nameLength > end) return null;
    entries.push({ name: bytes.toString('utf8', offset + 46, offset + 46 + nameLength), compressedBytes, uncompressedBytes });
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}
