export { MessageReader, AbstractMessageReader, ReadableStreamMessageReader } from './reader.js';
export { MessageConnection, createMessageConnection } from './connection.js';
