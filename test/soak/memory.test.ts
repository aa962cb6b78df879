import { soakSuite } from '../support/soak-suite';

// Long-lived state stays bounded (test/support/soak-suite.ts).
soakSuite('memory');
