import { MessageReader } from './reader.js';

export interface MessageConnection {
	reader: MessageReader;
}

export function createMessageConnection(reader: MessageReader): MessageConnection {
	return { reader };
}

export function decode<T>(text: string): T {
	return JSON.parse(text) as T;
}
