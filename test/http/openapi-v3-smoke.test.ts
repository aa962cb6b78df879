import { createMemoryAdapter } from '../../adapters/memory/index';
import { smokeSuite } from './openapi-v3-smoke-suite';

smokeSuite('memory', () => createMemoryAdapter());
smokeSuite('sqlite');
