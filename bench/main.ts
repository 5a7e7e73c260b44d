// `npm run bench -- <name>` runs bench/<name>.ts; each bench prints its own table.
import path from 'node:path';
import fs from 'node:fs';

async function main(): Promise<void> {
  const name = process.argv[2];
  const available = fs
    .readdirSync(__dirname)
    .filter((file) => file.endsWith('.js') && file !== 'main.js' && !file.startsWith('_'))
    .map((file) => file.replace(/\.js$/, ''));
  if (!name || !available.includes(name)) {
    console.error(`usage: npm run bench -- <${available.join('|')}>`);
    process.exitCode = 2;
    return;
  }
  const bench = require(path.join(__dirname, name)) as { run(args: string[]): Promise<void> };
  await bench.run(process.argv.slice(3));
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
