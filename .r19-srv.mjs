// dev helper: s3rver on 127.0.0.1:4569 with bucket 'ds' holding N objects of B bytes
import S3rver from 's3rver';
import { S3Client, PutObjectCommand } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
const [n, bytes] = [Number(process.argv[2] ?? 200), Number(process.argv[3] ?? 262144)];
const s = new S3rver({ port: 4569, address: '127.0.0.1', silent: true, directory: '/tmp/r19/s3', configureBuckets: [{ name: 'ds' }] });
await s.run();
const c = new S3Client({ endpoint: 'http://127.0.0.1:4569', forcePathStyle: true, region: 'us-east-1', credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
for (let k = 0; k < n; k++) await c.send(new PutObjectCommand({ Bucket: 'ds', Key: `train/${String(k).padStart(5, '0')}.bin`, Body: randomBytes(bytes) }));
console.log('ready');
