// Loaded by mocha before every suite (see .mocharc.json).
import 'reflect-metadata';

process.env.LOG_LEVEL = process.env.LOG_LEVEL ?? 'silent';
