// The audio a visitor may send to speech to text, told by its bytes (never by the name or type
// the client gave): the formats OpenAI-compatible transcription servers take. A browser's
// MediaRecorder makes WebM (Chrome, Firefox) or MP4 (Safari); uploads may be WAV, MP3, OGG or
// FLAC. Anything else is refused before it leaves the platform.

export interface AudioType {
  /** The media type sent with the audio. */
  mime: string;
  /** The file name extension speech servers read the format from. */
  extension: string;
}

export const SUPPORTED_AUDIO_TYPES: readonly string[] = ['audio/webm', 'audio/mp4', 'audio/mpeg', 'audio/wav', 'audio/ogg', 'audio/flac'];

const ascii = (bytes: Buffer, start: number, text: string): boolean => bytes.length >= start + text.length && bytes.toString('latin1', start, start + text.length) === text;

/** The type of the audio in `bytes`, or null when it is none of SUPPORTED_AUDIO_TYPES. */
export function sniffAudio(bytes: Buffer): AudioType | null {
  if (bytes.length < 4) return null;
  // EBML header: WebM (Matroska) files.
  if (bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3) return { mime: 'audio/webm', extension: 'webm' };
  if (ascii(bytes, 4, 'ftyp')) return { mime: 'audio/mp4', extension: 'm4a' };
  if (ascii(bytes, 0, 'RIFF') && ascii(bytes, 8, 'WAVE')) return { mime: 'audio/wav', extension: 'wav' };
  if (ascii(bytes, 0, 'OggS')) return { mime: 'audio/ogg', extension: 'ogg' };
  if (ascii(bytes, 0, 'fLaC')) return { mime: 'audio/flac', extension: 'flac' };
  if (ascii(bytes, 0, 'ID3')) return { mime: 'audio/mpeg', extension: 'mp3' };
  // An MPEG audio frame: eleven sync bits, then a layer other than "reserved" (which AAC's ADTS
  // headers use: those are not MP3).
  if (bytes[0] === 0xff && (bytes[1] & 0xe0) === 0xe0 && ((bytes[1] >> 1) & 0x03) !== 0) return { mime: 'audio/mpeg', extension: 'mp3' };
  return null;
}
