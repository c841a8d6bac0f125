; Definitions for JavaScript. See python.scm for the capture conventions.

(function_declaration
  name: (identifier) @name) @definition.function

(generator_function_declaration
  name: (identifier) @name) @definition.function

(class_declaration
  name: (identifier) @name) @definition.class

(method_definition
  name: [(property_identifier) (private_property_identifier)] @name) @definition.method

; const f = () => ... / const f = function () {} is a function, wherever it is declared
(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function

(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function

; const C = class {}
(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: (class))) @definition.class

; top-level const X = <anything else> is a constant
(program
  (lexical_declaration
    "const"
    (variable_declarator
      name: (identifier) @name
      value: (_) @_value)) @definition.constant
  (#not-match? @_value "^(function|class|async|\\(|[A-Za-z_$][A-Za-z0-9_$]*\\s*=>)"))

(program
  (export_statement
    (lexical_declaration
      "const"
      (variable_declarator
        name: (identifier) @name
        value: (_) @_value)) @definition.constant)
  (#not-match? @_value "^(function|class|async|\\(|[A-Za-z_$][A-Za-z0-9_$]*\\s*=>)"))

; class fields holding a function: `handle = () => {}`
(field_definition
  property: [(property_identifier) (private_property_identifier)] @name
  value: [(arrow_function) (function_expression)]) @definition.method

; `res.send = function send() {}`, `exports.parse = (s) => ...`, `Foo.prototype.bar = function () {}`:
; a function named `send` inside `res` (CommonJS modules define most of their API this way)
(expression_statement
  (assignment_expression
    left: (member_expression
      object: (_) @receiver
      property: (property_identifier) @name)
    right: [(arrow_function) (function_expression) (generator_function)])) @definition.function

; `module.exports = function parseQuery(qs) {}`: the function's own name is its name (the
; rule above names `exports`); `res.send = function send() {}` is left to the rule above
(expression_statement
  (assignment_expression
    left: (member_expression
      property: (property_identifier) @_property)
    right: (function_expression
      name: (identifier) @name))
  (#not-eq? @_property @name)) @definition.function

; `var generateDiff = (exports.generateDiff = function () {})`, `var f = exports.f = () => {}`:
; the variable is the function (mocha's reporters define their helpers this way)
(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [
      (assignment_expression
        right: [(arrow_function) (function_expression) (generator_function)])
      (parenthesized_expression
        (assignment_expression
          right: [(arrow_function) (function_expression) (generator_function)]))
    ])) @definition.function

(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [
      (assignment_expression
        right: [(arrow_function) (function_expression) (generator_function)])
      (parenthesized_expression
        (assignment_expression
          right: [(arrow_function) (function_expression) (generator_function)]))
    ])) @definition.function
