// CommonJS errors module: its API is assigned to `exports`.

exports.createFatalError = function (message) { // def: function exports.createFatalError
  return new Error(message);
};
