; Definitions for Swift. See python.scm for the capture conventions.
; class, struct, enum, actor and extension all parse as class_declaration; the
; declaration_kind tells them apart. An extension is not a symbol, but names the
; container of its members (@scope.name).

(class_declaration
  declaration_kind: ["class" "actor"]
  name: (type_identifier) @name) @definition.class

(class_declaration
  declaration_kind: "struct"
  name: (type_identifier) @name) @definition.struct

(class_declaration
  declaration_kind: "enum"
  name: (type_identifier) @name) @definition.enum

(class_declaration
  declaration_kind: "extension"
  name: (user_type (type_identifier) @scope.name)) @scope

(protocol_declaration
  name: (type_identifier) @name) @definition.interface

(function_declaration
  name: (simple_identifier) @name) @definition.function

(protocol_function_declaration
  name: (simple_identifier) @name) @definition.method

(typealias_declaration
  name: (type_identifier) @name) @definition.type
