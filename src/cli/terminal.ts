import { createInterface } from 'node:readline';

/** Questions and progress go to stderr, so that stdout stays the command's answer. */
export interface Terminal {
  /** Both stdin and stderr are a terminal: a person can be asked. */
  readonly interactive: boolean;
  /** stderr is a terminal: progress can be drawn. */
  readonly canDrawProgress: boolean;
  /** Asks a yes/no question; true only for y or yes. */
  confirm(question: string): Promise<boolean>;
  /** Asks for a line of text (hidden input is not needed: tokens are pasted). */
  ask(question: string): Promise<string>;
  progress(label: string): ProgressBar;
}

interface ProgressBar {
  update(done: number, total: number | undefined): void;
  finish(): void;
}

const BAR_WIDTH = 30;

function line(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  return new Promise((resolve) => {
    let answered = false;
    rl.question(question, (answer) => {
      answered = true;
      rl.close();
      resolve(answer.trim());
    });
    // Ctrl-D or Ctrl-C: no answer, which means no.
    rl.on('close', () => {
      if (!answered) {
        process.stderr.write('\n');
        resolve('');
      }
    });
  });
}

export const processTerminal: Terminal = {
  get interactive() {
    return process.stdin.isTTY === true && process.stderr.isTTY === true;
  },
  get canDrawProgress() {
    return process.stderr.isTTY === true;
  },
  async confirm(question) {
    return /^(y|yes)$/i.test(await line(`${question} [y/N] `));
  },
  ask(question) {
    return line(question);
  },
  progress(label) {
    let drawn = false;
    return {
      update(done, total) {
        let text: string;
        if (total && total > 0) {
          const share = Math.min(1, done / total);
          const filled = Math.round(share * BAR_WIDTH);
          text = `${label} [${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${Math.floor(share * 100)}% ${done}/${total}`;
        } else {
          text = `${label} ${done}`;
        }
        process.stderr.write(`\r${text}\x1b[K`);
        drawn = true;
      },
      finish() {
        if (drawn) process.stderr.write('\n');
      },
    };
  },
};
