// A local HTTP server that speaks S3's wire format for the three object operations the blob
// store uses (PutObject, GetObject, DeleteObject), path-style (`/bucket/key`), and checks each
// request's AWS Signature Version 4 against the credentials it was given, as S3 does. The S3
// adapter is tested against it because no S3 service is reachable where this is built.

import { createHash, createHmac, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export interface S3Request {
  method: string;
  path: string;
  query: string;
  headers: http.IncomingHttpHeaders;
}

export interface LocalS3Server {
  url: string;
  bucket: string;
  region: string;
  credentials: S3Credentials;
  /** The objects by key, as stored. */
  objects: Map<string, { bytes: Buffer; content_type: string }>;
  /** Every request received, oldest first. */
  requests: S3Request[];
  /** Makes the next `count` requests fail with 500 InternalError (S3's retryable error). */
  failNext(count: number): void;
  close(): Promise<void>;
}

const hmac = (key: Buffer | string, text: string): Buffer => createHmac('sha256', key).update(text, 'utf8').digest();
const sha256Hex = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

function errorXml(code: string, message: string, resource: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><Resource>${resource}</Resource><RequestId>${randomUUID()}</RequestId></Error>`;
}

/** The canonical query string of SigV4: pairs sorted by name then value, as sent (the client encodes them already). */
function canonicalQuery(query: string): string {
  if (query === '') return '';
  return query
    .split('&')
    .map((pair) => (pair.includes('=') ? pair : `${pair}=`))
    .sort()
    .join('&');
}

/** Whether the request carries a valid SigV4 signature by `credentials` for `region` and service s3. */
function signatureProblem(request: http.IncomingMessage, body: Buffer, credentials: S3Credentials, region: string): string | null {
  const authorization = request.headers.authorization ?? '';
  const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(authorization);
  if (!match) return 'no AWS4-HMAC-SHA256 Authorization header';
  const [, accessKeyId, date, scopeRegion, signedHeaders, signature] = match;
  if (accessKeyId !== credentials.accessKeyId) return 'unknown access key';
  if (scopeRegion !== region) return `signed for region ${scopeRegion}`;
  const amzDate = String(request.headers['x-amz-date'] ?? '');
  if (!amzDate.startsWith(date)) return 'x-amz-date does not match the credential scope';
  const payloadHash = String(request.headers['x-amz-content-sha256'] ?? '');
  if (payloadHash !== 'UNSIGNED-PAYLOAD' && payloadHash !== sha256Hex(body)) return 'the body does not match x-amz-content-sha256';
  const [path, query = ''] = (request.url ?? '/').split(/\?(.*)/s, 2);
  const names = signedHeaders.split(';');
  if (!names.includes('host')) return 'host is not signed';
  const canonicalHeaders = names.map((name) => `${name}:${String(request.headers[name] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonicalRequest = [request.method, path, canonicalQuery(query), canonicalHeaders, signedHeaders, payloadHash].join('\n');
  const scope = `${date}/${region}/s3/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, date), region), 's3'), 'aws4_request');
  return createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex') === signature ? null : 'the signature does not match';
}

export async function startLocalS3Server(options: { bucket?: string; region?: string } = {}): Promise<LocalS3Server> {
  const bucket = options.bucket ?? 'documents';
  const region = options.region ?? 'eu-test-1';
  const credentials: S3Credentials = { accessKeyId: 'AKIDLOCALTEST', secretAccessKey: `secret-${randomUUID()}` };
  const objects = new Map<string, { bytes: Buffer; content_type: string }>();
  const requests: S3Request[] = [];
  let failures = 0;

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const [path, query = ''] = (request.url ?? '/').split(/\?(.*)/s, 2);
      requests.push({ method: request.method ?? '', path, query, headers: request.headers });
      const answerError = (status: number, code: string, message: string): void => {
        const xml = errorXml(code, message, path);
        response.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(xml), 'x-amz-request-id': randomUUID() });
        response.end(request.method === 'HEAD' ? undefined : xml);
      };
      if (failures > 0) {
        failures -= 1;
        answerError(500, 'InternalError', 'We encountered an internal error. Please try again.');
        return;
      }
      const problem = signatureProblem(request, body, credentials, region);
      if (problem) {
        answerError(403, 'SignatureDoesNotMatch', problem);
        return;
      }
      const [, bucketName, ...keySegments] = path.split('/');
      if (bucketName !== bucket) {
        answerError(404, 'NoSuchBucket', 'The specified bucket does not exist');
        return;
      }
      const key = keySegments.map(decodeURIComponent).join('/');
      if (key === '') {
        answerError(400, 'InvalidRequest', 'only object operations are served here');
        return;
      }
      switch (request.method) {
        case 'PUT': {
          objects.set(key, { bytes: body, content_type: String(request.headers['content-type'] ?? 'binary/octet-stream') });
          response.writeHead(200, { etag: `"${createHash('md5').update(body).digest('hex')}"`, 'content-length': 0 });
          response.end();
          return;
        }
        case 'GET': {
          const object = objects.get(key);
          if (!object) {
            answerError(404, 'NoSuchKey', 'The specified key does not exist.');
            return;
          }
          response.writeHead(200, {
            'content-type': object.content_type,
            'content-length': object.bytes.length,
            etag: `"${createHash('md5').update(object.bytes).digest('hex')}"`,
            'last-modified': new Date().toUTCString(),
            'accept-ranges': 'bytes',
          });
          response.end(object.bytes);
          return;
        }
        case 'DELETE': {
          objects.delete(key);
          response.writeHead(204);
          response.end();
          return;
        }
        default:
          answerError(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bucket,
    region,
    credentials,
    objects,
    requests,
    failNext(count) {
      failures = count;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
