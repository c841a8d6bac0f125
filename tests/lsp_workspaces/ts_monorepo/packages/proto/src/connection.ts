// The package is imported by its name; with no node_modules (no `npm install`) the
// import does not resolve, and the server cannot link these uses to their definition.
import { MessageReader, createMessageConnection, decode } from 'tiny-rpc';

export function createProtocolConnection(reader: MessageReader) {
	return createMessageConnection(reader);
}

export class ProtocolReader implements MessageReader {
	listen(callback: (data: string) => void): void {
		callback('protocol');
	}
}

export function readSettings(text: string): Record<string, unknown> {
	return decode<Record<string, unknown>>(text);
}
