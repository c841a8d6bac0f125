; Definitions for Kotlin. See python.scm for the capture conventions.
; (This grammar has few field names; interfaces and enums are class_declarations too,
; told apart by their keyword: a node that several patterns match takes the specific kind.)

(class_declaration
  (type_identifier) @name) @definition.class

(class_declaration
  "interface"
  (type_identifier) @name) @definition.interface

(class_declaration
  "enum"
  (type_identifier) @name) @definition.enum

(object_declaration
  (type_identifier) @name) @definition.class

(function_declaration
  (simple_identifier) @name) @definition.function

(type_alias
  (type_identifier) @name) @definition.type
