import { createMemoryAdapter } from '../../adapters/memory/index';
import { tutorialSuite } from './openapi-v3-tutorial-suite';

tutorialSuite('memory', () => createMemoryAdapter());
tutorialSuite('sqlite');
