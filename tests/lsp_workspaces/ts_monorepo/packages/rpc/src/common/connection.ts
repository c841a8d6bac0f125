import { MessageReader } from './reader.js';

export interface MessageConnection {
	reader: MessageReader;
}

export function createMessageConnection(reader: MessageReader): MessageConnection {
	return { reader };
}
