; Definitions for Haskell. See python.scm for the capture conventions.
; A function is a type signature plus one or more equations: each is captured, and
; parse.py merges consecutive clauses of one name into one symbol (signature first).
; An instance is not a symbol, but names the container of its methods (@scope.name).

(header
  module: (module) @name) @definition.module

(declarations
  [
    (data_type name: (name) @name)
    (newtype name: (name) @name)
    (type_synomym name: (name) @name)
    (type_family name: (name) @name)
    (data_family name: (name) @name)
  ] @definition.type)

(class
  name: (name) @name) @definition.interface

(instance
  name: (name) @scope.name) @scope

; top-level, class and instance members; local `where` / `let` bindings are not symbols
(declarations
  [
    (signature name: (variable) @name)
    (function name: (variable) @name)
    (bind name: (variable) @name)
  ] @definition.function)

(class_declarations
  [
    (signature name: (variable) @name)
    (function name: (variable) @name)
    (bind name: (variable) @name)
  ] @definition.function)

(instance_declarations
  [
    (function name: (variable) @name)
    (bind name: (variable) @name)
  ] @definition.function)

; `parseOr, parseAnd :: Int` (the first name; the equations name the others)
(declarations
  (signature
    names: (binding_list . name: (variable) @name)) @definition.function)

(foreign_import
  signature: (signature name: (variable) @name)) @definition.function

; record fields are accessor functions
(field
  name: (field_name (variable) @name)) @definition.field
