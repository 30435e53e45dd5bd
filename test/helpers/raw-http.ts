import { connect } from 'node:net';

/**
 * Writes `text` on a new connection to 127.0.0.1:`port`, as sent (a head fetch would not send: no Host, two of them,
 * an absolute target), and resolves with all the server wrote back, in Latin-1, once it closed the connection.
 */
export function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}
