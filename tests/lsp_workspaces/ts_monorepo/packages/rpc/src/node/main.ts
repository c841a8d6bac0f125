import {
	AbstractMessageReader, ReadableStreamMessageReader, MessageReader, MessageConnection,
	createMessageConnection as _createMessageConnection
} from '../common/api.js';

export * from '../common/api.js';

export class IPCMessageReader extends AbstractMessageReader {
	listen(callback: (data: string) => void): void {
		callback('ipc');
	}
}

export class PortMessageReader extends AbstractMessageReader implements MessageReader {
	listen(callback: (data: string) => void): void {
		callback('port');
	}
}

export class SocketMessageReader
	extends ReadableStreamMessageReader {
}

export function createMessageConnection(reader: MessageReader): MessageConnection;
export function createMessageConnection(reader: MessageReader, name: string): MessageConnection;
export function createMessageConnection(reader: MessageReader, name?: string): MessageConnection {
	const connection = _createMessageConnection(reader);
	return name ? connection : connection;
}
