/* A reader interface merged with a namespace of the same name, as vscode-jsonrpc has it. */

export interface MessageReader {
	listen(callback: (data: string) => void): void;
}

export namespace MessageReader {
	export function is(value: unknown): value is MessageReader {
		return typeof value === 'object' && value !== null && 'listen' in value;
	}
}

export abstract class AbstractMessageReader implements MessageReader {
	abstract listen(callback: (data: string) => void): void;
}

export class ReadableStreamMessageReader extends AbstractMessageReader {
	listen(callback: (data: string) => void): void {
		callback('stream');
	}
}
