import { createMessageConnection, IPCMessageReader, SocketMessageReader } from '../main.js';

// "createMessageConnection" in a string or a comment is no use of it
export function opensTwo(): number {
	const first = createMessageConnection(new IPCMessageReader());
	const second = createMessageConnection(new SocketMessageReader(), 'second');
	return [first, second].length;
}

export function opensOne(): boolean {
	return createMessageConnection(new IPCMessageReader()) !== undefined;
}
