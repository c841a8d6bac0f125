; Definitions for Scala. See python.scm for the capture conventions.

(class_definition
  name: (identifier) @name) @definition.class

(object_definition
  name: (identifier) @name) @definition.class

; `package object util { ... }`: its members are the package's
(package_object
  name: (identifier) @name) @definition.module

(trait_definition
  name: (identifier) @name) @definition.trait

(enum_definition
  name: (identifier) @name) @definition.enum

; Scala 3 enum cases (`case Red`, `case Mix(a: Int)`): the enum's constants
(enum_case_definitions
  [(simple_enum_case name: (identifier) @name)
   (full_enum_case name: (identifier) @name)] @definition.constant)

(function_definition
  name: (identifier) @name) @definition.function

; a def in an anonymous instance is a method, also where a val holds it
; (`implicit val m: Monad[F] = new Monad[F] { def pure ... }` gives method `m.pure`): this
; match is reported before the one above (its pattern starts higher), and the first one wins
(instance_expression
  (template_body
    (function_definition
      name: (identifier) @name) @definition.method))

(function_declaration
  name: (identifier) @name) @definition.function

(type_definition
  name: (type_identifier) @name) @definition.type

; `extension (o: Order) def total = ...` is not a symbol, but names the container of its
; methods (`Order.total`), like an impl block
(extension_definition
  parameters: (parameters
    (parameter
      type: [
        (type_identifier) @scope.name
        (generic_type type: (type_identifier) @scope.name)
        (stable_type_identifier (type_identifier) @scope.name .)
      ]))) @scope

; a named given: `given intShow: Show[Int] with ...` holds methods like an object; a given
; alias (`given ord: Ordering[A] = ...`) is a named (implicit) value
(given_definition
  name: (identifier) @name
  "with"
  body: (with_template_body)) @definition.class

(given_definition
  name: (identifier) @name
  "=") @definition.field

; Members: val/var (and abstract val/var) in the body of a class/object/trait/package object/
; enum/given, top-level ones (Scala 3 package members), `val`/`var` class parameters and case
; class parameters; ALL_CAPS ones are constants. Not locals (in blocks), nor members of an
; anonymous `new T { ... }` (its template_body is no `body:`).
; One pattern per parent and kind: a #match? after a top-level [...] alternation is not
; applied by this tree-sitter (tried: ALL_CAPS properties came out as fields).
(_
  body: (template_body
    [(val_definition pattern: [(identifier) @name (identifiers (identifier) @name)])
     (var_definition pattern: [(identifier) @name (identifiers (identifier) @name)])
     (val_declaration name: (identifier) @name)
     (var_declaration name: (identifier) @name)] @definition.field)
  (#not-match? @name "^_*[A-Z][A-Z0-9_]*$"))

(_
  body: (template_body
    [(val_definition pattern: [(identifier) @name (identifiers (identifier) @name)])
     (var_definition pattern: [(identifier) @name (identifiers (identifier) @name)])
     (val_declaration name: (identifier) @name)
     (var_declaration name: (identifier) @name)] @definition.constant)
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

(_
  body: (with_template_body
    [(val_definition pattern: [(identifier) @name (identifiers (identifier) @name)])
     (var_definition pattern: [(identifier) @name (identifiers (identifier) @name)])
     (val_declaration name: (identifier) @name)
     (var_declaration name: (identifier) @name)] @definition.field)
  (#not-match? @name "^_*[A-Z][A-Z0-9_]*$"))

(_
  body: (with_template_body
    [(val_definition pattern: [(identifier) @name (identifiers (identifier) @name)])
     (var_definition pattern: [(identifier) @name (identifiers (identifier) @name)])
     (val_declaration name: (identifier) @name)
     (var_declaration name: (identifier) @name)] @definition.constant)
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

(enum_body
  [(val_definition pattern: [(identifier) @name (identifiers (identifier) @name)])
   (var_definition pattern: [(identifier) @name (identifiers (identifier) @name)])
   (val_declaration name: (identifier) @name)
   (var_declaration name: (identifier) @name)] @definition.field
  (#not-match? @name "^_*[A-Z][A-Z0-9_]*$"))

(enum_body
  [(val_definition pattern: [(identifier) @name (identifiers (identifier) @name)])
   (var_definition pattern: [(identifier) @name (identifiers (identifier) @name)])
   (val_declaration name: (identifier) @name)
   (var_declaration name: (identifier) @name)] @definition.constant
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

(compilation_unit
  [(val_definition pattern: [(identifier) @name (identifiers (identifier) @name)])
   (var_definition pattern: [(identifier) @name (identifiers (identifier) @name)])] @definition.field
  (#not-match? @name "^_*[A-Z][A-Z0-9_]*$"))

(compilation_unit
  [(val_definition pattern: [(identifier) @name (identifiers (identifier) @name)])
   (var_definition pattern: [(identifier) @name (identifiers (identifier) @name)])] @definition.constant
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

(class_parameters
  (class_parameter
    ["val" "var"]
    name: (identifier) @name) @definition.field)

(class_definition
  "case"
  class_parameters: (class_parameters
    (class_parameter
      name: (identifier) @name) @definition.field))
