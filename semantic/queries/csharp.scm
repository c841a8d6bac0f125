; Definitions for C#. See python.scm for the capture conventions.

(namespace_declaration
  name: [(identifier) (qualified_name)] @name) @definition.module

(file_scoped_namespace_declaration
  name: [(identifier) (qualified_name)] @name) @definition.module

(class_declaration
  name: (identifier) @name) @definition.class

(record_declaration
  name: (identifier) @name) @definition.class

(struct_declaration
  name: (identifier) @name) @definition.struct

(interface_declaration
  name: (identifier) @name) @definition.interface

(enum_declaration
  name: (identifier) @name) @definition.enum

(method_declaration
  name: (identifier) @name) @definition.method

(constructor_declaration
  name: (identifier) @name) @definition.method

(field_declaration
  (modifier) @_modifier
  (variable_declaration
    (variable_declarator
      name: (identifier) @name))
  (#eq? @_modifier "const")) @definition.constant
