/**
 * Whether a process of this host with this id is running (signal 0 checks without signalling): a job lease
 * or an initial load whose owner is gone can be taken over at once instead of after its lease. A process of
 * another user answers EPERM: it is running.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
