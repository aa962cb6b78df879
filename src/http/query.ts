import { CatalogError, type Violation } from '../errors';

/**
 * Query parameters are text; these turn them into the typed values a catalog call takes, and refuse
 * what cannot be read (INVALID_INPUT at the parameter's name). Ranges and meanings are the catalog's.
 */
export class QueryReader {
  private readonly violations: Violation[] = [];

  constructor(private readonly query: URLSearchParams) {}

  string(name: string): string | undefined {
    const value = this.query.get(name);
    return value === null ? undefined : value;
  }

  strings(name: string): string[] {
    return this.query
      .getAll(name)
      .flatMap((v) => v.split(','))
      .filter((v) => v !== '');
  }

  /** A decimal integer (epoch milliseconds, counts). */
  integer(name: string): number | undefined {
    const text = this.string(name);
    if (text === undefined || text === '') return undefined;
    if (!/^-?\d{1,16}$/.test(text) || !Number.isSafeInteger(Number(text))) {
      this.violations.push({ path: name, message: `must be an integer, got "${text.slice(0, 40)}"` });
      return undefined;
    }
    return Number(text);
  }

  /** `true` or `false` (any case); absent is undefined. */
  boolean(name: string): boolean | undefined {
    const text = this.string(name);
    if (text === undefined || text === '') return undefined;
    const lower = text.toLowerCase();
    if (lower === 'true') return true;
    if (lower === 'false') return false;
    this.violations.push({ path: name, message: `must be true or false, got "${text.slice(0, 40)}"` });
    return undefined;
  }

  /** Throws INVALID_INPUT listing every parameter that could not be read. */
  done(): void {
    if (this.violations.length === 0) return;
    const listed = this.violations.map((v) => `${v.path} ${v.message}`).join('; ');
    throw new CatalogError('INVALID_INPUT', `invalid query parameters: ${listed}`, { details: this.violations });
  }
}
