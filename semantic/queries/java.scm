; Definitions for Java. See python.scm for the capture conventions.

(class_declaration
  name: (identifier) @name) @definition.class

(record_declaration
  name: (identifier) @name) @definition.class

; record components are the record's fields (and name its accessors)
(record_declaration
  parameters: (formal_parameters
    (formal_parameter
      name: (identifier) @name) @definition.field))

(interface_declaration
  name: (identifier) @name) @definition.interface

(annotation_type_declaration
  name: (identifier) @name) @definition.interface

; `String value() default "";` in an @interface
(annotation_type_element_declaration
  name: (identifier) @name) @definition.method

(enum_declaration
  name: (identifier) @name) @definition.enum

(enum_body
  (enum_constant
    name: (identifier) @name) @definition.constant)

(method_declaration
  name: (identifier) @name) @definition.method

(constructor_declaration
  name: (identifier) @name) @definition.method

; a record's compact constructor: `public Money { ... }`
(compact_constructor_declaration
  name: (identifier) @name) @definition.method

; Fields of named types (not locals, which are local_variable_declarations, nor members of
; anonymous classes): ALL_CAPS ones are constants, the rest fields (`static final Logger log`).
(_
  body: (class_body
    (field_declaration
      declarator: (variable_declarator
        name: (identifier) @name)) @definition.constant)
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

(_
  body: (class_body
    (field_declaration
      declarator: (variable_declarator
        name: (identifier) @name)) @definition.field)
  (#not-match? @name "^_*[A-Z][A-Z0-9_]*$"))

(enum_body_declarations
  (field_declaration
    declarator: (variable_declarator
      name: (identifier) @name)) @definition.constant
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

(enum_body_declarations
  (field_declaration
    declarator: (variable_declarator
      name: (identifier) @name)) @definition.field
  (#not-match? @name "^_*[A-Z][A-Z0-9_]*$"))

; interface (and @interface) fields are implicitly static final
(interface_body
  (constant_declaration
    declarator: (variable_declarator
      name: (identifier) @name)) @definition.constant)

(annotation_type_body
  (constant_declaration
    declarator: (variable_declarator
      name: (identifier) @name)) @definition.constant)
