; Definitions for TSX (same grammar as TypeScript plus JSX). See python.scm for the capture conventions.

(function_declaration
  name: (identifier) @name) @definition.function

(generator_function_declaration
  name: (identifier) @name) @definition.function

(function_signature
  name: (identifier) @name) @definition.function

(class_declaration
  name: (type_identifier) @name) @definition.class

(abstract_class_declaration
  name: (type_identifier) @name) @definition.class

(interface_declaration
  name: (type_identifier) @name) @definition.interface

(enum_declaration
  name: (identifier) @name) @definition.enum

(type_alias_declaration
  name: (type_identifier) @name) @definition.type

(internal_module
  name: (identifier) @name) @definition.module

(method_definition
  name: [(property_identifier) (private_property_identifier)] @name) @definition.method

(abstract_method_signature
  name: (property_identifier) @name) @definition.method

(method_signature
  name: (property_identifier) @name) @definition.method

(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function

(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function

(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: (class))) @definition.class

(program
  (lexical_declaration
    "const"
    (variable_declarator
      name: (identifier) @name
      value: (_) @_value)) @definition.constant
  (#not-match? @_value "^(function|class|async|\\(|<|[A-Za-z_$][A-Za-z0-9_$]*\\s*=>)"))

(program
  (export_statement
    (lexical_declaration
      "const"
      (variable_declarator
        name: (identifier) @name
        value: (_) @_value)) @definition.constant)
  (#not-match? @_value "^(function|class|async|\\(|<|[A-Za-z_$][A-Za-z0-9_$]*\\s*=>)"))

; class fields holding a function: `handle = () => {}`
(public_field_definition
  name: [(property_identifier) (private_property_identifier)] @name
  value: [(arrow_function) (function_expression)]) @definition.method

; `res.send = function send() {}`, `exports.parse = (s) => ...`, `Foo.prototype.bar = function () {}`:
; a function named `send` inside `res` (CommonJS modules define most of their API this way)
(expression_statement
  (assignment_expression
    left: (member_expression
      object: (_) @receiver
      property: (property_identifier) @name)
    right: [(arrow_function) (function_expression) (generator_function)])) @definition.function
