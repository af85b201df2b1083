/**
 * `echolens … | head`: when the reader closes the pipe, writing to stdout fails
 * with EPIPE. That is the reader's choice, not an error: stop quietly (no
 * stack trace) with exit code 0.
 */
export function exitQuietlyOnBrokenPipe(stream: NodeJS.WriteStream = process.stdout): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}
