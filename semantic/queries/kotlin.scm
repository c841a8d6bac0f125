; Definitions for Kotlin. See python.scm for the capture conventions.
; (This grammar has few field names; interfaces are class_declarations too.)

(class_declaration
  (type_identifier) @name) @definition.class

(object_declaration
  (type_identifier) @name) @definition.class

(function_declaration
  (simple_identifier) @name) @definition.function

(type_alias
  (type_identifier) @name) @definition.type
