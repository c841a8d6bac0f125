; Definitions for PHP. See python.scm for the capture conventions.

(function_definition
  name: (name) @name) @definition.function

(class_declaration
  name: (name) @name) @definition.class

(interface_declaration
  name: (name) @name) @definition.interface

(trait_declaration
  name: (name) @name) @definition.trait

(enum_declaration
  name: (name) @name) @definition.enum

(method_declaration
  name: (name) @name) @definition.method

(const_declaration
  (const_element
    (name) @name) @definition.constant)
