// CommonJS, as untyped Node.js libraries (mocha 10) define their API.

const {createFatalError} = require(process.env.NAV_FATAL || './fatal'); // ref: createFatalError noref: fatal

module.exports = function parseQuery(qs) { // def: function parseQuery
  return qs.split('&');
};

var generateDiff = (exports.generateDiff = function (actual, expected) { // def: function generateDiff
  return createFatalError(actual + expected); // ref: createFatalError
});

var inlineDiff = exports.inlineDiff = function (text) { // def: function inlineDiff
  return generateDiff(text, text); // ref: generateDiff
};

const { inlineDiff: renamed = inlineDiff } = module.exports; // ref: inlineDiff renamed

function Reporter() {} // def: function Reporter
Reporter.prototype.epilogue = function epilogue() { // def: method Reporter.prototype.epilogue
  return inlineDiff('summary'); // ref: inlineDiff
};

const noop = () => {}; // def: function noop
export const stub = {epilogue: noop}; // ref: epilogue noop
