// Audio told by its bytes (application/speech/audio-types.ts).

import { expect } from 'chai';
import { sniffAudio } from '../../application/speech/audio-types';
import { wavOf } from '../support/audio';

describe('audio types (sniffed)', () => {
  it('tells each supported format by its first bytes', () => {
    expect(sniffAudio(wavOf(0.01))).to.deep.equal({ mime: 'audio/wav', extension: 'wav' });
    expect(sniffAudio(Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81]))).to.deep.equal({ mime: 'audio/webm', extension: 'webm' });
    expect(sniffAudio(Buffer.concat([Buffer.from([0, 0, 0, 0x20]), Buffer.from('ftypM4A ')]))).to.deep.equal({ mime: 'audio/mp4', extension: 'm4a' });
    expect(sniffAudio(Buffer.from('OggS\0\x02rest'))).to.deep.equal({ mime: 'audio/ogg', extension: 'ogg' });
    expect(sniffAudio(Buffer.from('fLaC\0\0\0\x22'))).to.deep.equal({ mime: 'audio/flac', extension: 'flac' });
    expect(sniffAudio(Buffer.from('ID3\x04\0\0\0\0\0\0'))).to.deep.equal({ mime: 'audio/mpeg', extension: 'mp3' });
    expect(sniffAudio(Buffer.from([0xff, 0xfb, 0x90, 0x64]))).to.deep.equal({ mime: 'audio/mpeg', extension: 'mp3' });
  });

  it('refuses what is not audio of those formats, whatever it is called', () => {
    expect(sniffAudio(Buffer.from('%PDF-1.7\n'))).to.equal(null);
    expect(sniffAudio(Buffer.from('MZ\x90\0\x03\0\0\0'))).to.equal(null);
    expect(sniffAudio(Buffer.from([0xff, 0xf1, 0x50, 0x80]))).to.equal(null);
    expect(sniffAudio(Buffer.from('RIFF\0\0\0\0AVI '))).to.equal(null);
    expect(sniffAudio(Buffer.from('ab'))).to.equal(null);
  });
});
