; Definitions for C++. See python.scm for the capture conventions.
; Out-of-line definitions (`Order Order::create(...)`) are named by their qualified
; identifier; the parser turns `ns::Class::m` into containers `ns.Class` and name `m`.

(function_definition
  declarator: (function_declarator
    declarator: [(identifier) (field_identifier) (qualified_identifier) (operator_name) (destructor_name)] @name)) @definition.function

(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: [(identifier) (field_identifier) (qualified_identifier)] @name))) @definition.function

(function_definition
  declarator: (reference_declarator
    (function_declarator
      declarator: [(identifier) (field_identifier) (qualified_identifier)] @name))) @definition.function

; member function declarations inside a class body (incl. pure virtual ones)
(field_declaration_list
  (field_declaration
    declarator: (function_declarator
      declarator: [(field_identifier) (identifier) (operator_name) (destructor_name)] @name)) @definition.method)

(field_declaration_list
  (declaration
    declarator: (function_declarator
      declarator: [(field_identifier) (identifier) (destructor_name)] @name)) @definition.method)

(class_specifier
  name: [(type_identifier) (qualified_identifier)] @name
  body: (field_declaration_list)) @definition.class

(struct_specifier
  name: [(type_identifier) (qualified_identifier)] @name
  body: (field_declaration_list)) @definition.struct

(union_specifier
  name: (type_identifier) @name
  body: (field_declaration_list)) @definition.struct

(enum_specifier
  name: (type_identifier) @name
  body: (enumerator_list)) @definition.enum

(type_definition
  declarator: (type_identifier) @name) @definition.type

(alias_declaration
  name: (type_identifier) @name) @definition.type

(namespace_definition
  name: [(namespace_identifier) (nested_namespace_specifier)] @name) @definition.module

(preproc_def
  name: (identifier) @name) @definition.constant

; namespace- or file-level const / constexpr variables
(declaration
  (type_qualifier) @_const
  declarator: (init_declarator
    declarator: (identifier) @name)
  (#any-of? @_const "const" "constexpr")) @definition.constant
