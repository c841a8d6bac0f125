; Definitions for Swift. See python.scm for the capture conventions.
; class, struct, enum and extension all parse as class_declaration.

(class_declaration
  name: (type_identifier) @name) @definition.class

(protocol_declaration
  name: (type_identifier) @name) @definition.interface

(function_declaration
  name: (simple_identifier) @name) @definition.function

(protocol_function_declaration
  name: (simple_identifier) @name) @definition.method

(typealias_declaration
  name: (type_identifier) @name) @definition.type
