; Definitions for Rust. See python.scm for the capture conventions.
; An impl block is not a symbol, but names the container of its methods (@scope.name).

(function_item
  name: (identifier) @name) @definition.function

(function_signature_item
  name: (identifier) @name) @definition.function

(struct_item
  name: (type_identifier) @name) @definition.struct

(union_item
  name: (type_identifier) @name) @definition.struct

(enum_item
  name: (type_identifier) @name) @definition.enum

; enum variants (SYMBOL_KINDS has no enum-member kind: they are the enum's constants)
(enum_variant
  name: (identifier) @name) @definition.constant

; named fields of structs, unions and struct-like variants (tuple fields have no name)
(field_declaration_list
  (field_declaration
    name: (field_identifier) @name) @definition.field)

(trait_item
  name: (type_identifier) @name) @definition.trait

; `type Output;` in a trait (in an impl it is a type_item)
(associated_type
  name: (type_identifier) @name) @definition.type

(type_item
  name: (type_identifier) @name) @definition.type

(mod_item
  name: (identifier) @name) @definition.module

(const_item
  name: (identifier) @name) @definition.constant

(static_item
  name: (identifier) @name) @definition.constant

(macro_definition
  name: (identifier) @name) @definition.function

; `impl Trait for &Type`, `impl Trait for i32` and `impl dyn Trait` name a container too.
(impl_item
  type: [
    (type_identifier) @scope.name
    (generic_type type: (type_identifier) @scope.name)
    (scoped_type_identifier name: (type_identifier) @scope.name)
    (generic_type type: (scoped_type_identifier name: (type_identifier) @scope.name))
    (reference_type type: [
      (type_identifier) @scope.name
      (generic_type type: (type_identifier) @scope.name)
      (scoped_type_identifier name: (type_identifier) @scope.name)
    ])
    (primitive_type) @scope.name
    (dynamic_type trait: (type_identifier) @scope.name)
  ]) @scope
