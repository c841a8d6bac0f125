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

(enum_class_body
  (enum_entry
    (simple_identifier) @name) @definition.constant)

(function_declaration
  !receiver
  (simple_identifier) @name) @definition.function

; a fun in any class body is a method, also in an enum entry's body or an anonymous object:
; this match is reported before the one above (its pattern starts higher), and the first wins
(class_body
  (function_declaration
    !receiver
    (simple_identifier) @name) @definition.method)

; an extension function `fun Order.total()` is named in its receiver type (`Order.total`);
; `fun <T> List<T>.second()`, `fun Order?.orEmpty()`, `fun Outer.Inner.f()` name the last type.
; (The receiver patterns exclude each other: one match per function.)
(function_declaration
  receiver: (receiver_type [
    (user_type (type_identifier) @receiver . (type_arguments)? .)
    (nullable_type (user_type (type_identifier) @receiver . (type_arguments)? .))
  ])
  (simple_identifier) @name
  (#not-match? @receiver "^[A-Z]$")) @definition.function

; a type parameter (`fun <T> T.also2()`) or a function type is no container
(function_declaration
  receiver: (receiver_type [
    (user_type . (type_identifier) @_param .)
    (nullable_type (user_type . (type_identifier) @_param .))
  ])
  (simple_identifier) @name
  (#match? @_param "^[A-Z]$")) @definition.function

(function_declaration
  receiver: (receiver_type [
    (parenthesized_type)
    (function_type)
    (nullable_type (parenthesized_type))
  ])
  (simple_identifier) @name) @definition.function

(type_alias
  (type_identifier) @name) @definition.type

; Properties: members of a class/object/companion body, top-level ones, and `val`/`var`
; constructor parameters; ALL_CAPS ones are constants. Not locals (in function bodies), nor
; members of an anonymous `object : T { ... }`.
; One pattern per parent and kind: a #match? after a top-level [...] alternation is not
; applied by this tree-sitter (tried: ALL_CAPS properties came out as fields).
(class_declaration
  (class_body
    (property_declaration
      !receiver
      (variable_declaration
        (simple_identifier) @name)) @definition.field)
  (#not-match? @name "^_*[A-Z][A-Z0-9_]*$"))

(class_declaration
  (class_body
    (property_declaration
      !receiver
      (variable_declaration
        (simple_identifier) @name)) @definition.constant)
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

(object_declaration
  (class_body
    (property_declaration
      !receiver
      (variable_declaration
        (simple_identifier) @name)) @definition.field)
  (#not-match? @name "^_*[A-Z][A-Z0-9_]*$"))

(object_declaration
  (class_body
    (property_declaration
      !receiver
      (variable_declaration
        (simple_identifier) @name)) @definition.constant)
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

(companion_object
  (class_body
    (property_declaration
      !receiver
      (variable_declaration
        (simple_identifier) @name)) @definition.field)
  (#not-match? @name "^_*[A-Z][A-Z0-9_]*$"))

(companion_object
  (class_body
    (property_declaration
      !receiver
      (variable_declaration
        (simple_identifier) @name)) @definition.constant)
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

(enum_class_body
  (property_declaration
    !receiver
    (variable_declaration
      (simple_identifier) @name)) @definition.field
  (#not-match? @name "^_*[A-Z][A-Z0-9_]*$"))

(enum_class_body
  (property_declaration
    !receiver
    (variable_declaration
      (simple_identifier) @name)) @definition.constant
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

(source_file
  (property_declaration
    !receiver
    (variable_declaration
      (simple_identifier) @name)) @definition.field
  (#not-match? @name "^_*[A-Z][A-Z0-9_]*$"))

(source_file
  (property_declaration
    !receiver
    (variable_declaration
      (simple_identifier) @name)) @definition.constant
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

; an extension property `val String.lastChar` is named in its receiver type, like a function
(property_declaration
  receiver: (receiver_type [
    (user_type (type_identifier) @receiver . (type_arguments)? .)
    (nullable_type (user_type (type_identifier) @receiver . (type_arguments)? .))
  ])
  (variable_declaration
    (simple_identifier) @name)
  (#not-match? @receiver "^[A-Z]$")) @definition.field

(primary_constructor
  (class_parameter
    (binding_pattern_kind)
    (simple_identifier) @name) @definition.field)
