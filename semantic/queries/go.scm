; Definitions for Go. See python.scm for the capture conventions.

(function_declaration
  name: (identifier) @name) @definition.function

(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [
        (type_identifier) @receiver
        (pointer_type (type_identifier) @receiver)
        (generic_type type: (type_identifier) @receiver)
        (pointer_type (generic_type type: (type_identifier) @receiver))
      ]))
  name: (field_identifier) @name) @definition.method

(type_declaration
  (type_spec
    name: (type_identifier) @name
    type: (struct_type)) @definition.struct)

(type_declaration
  (type_spec
    name: (type_identifier) @name
    type: (interface_type)) @definition.interface)

(type_declaration
  (type_spec
    name: (type_identifier) @name
    type: [
      (type_identifier) (qualified_type) (pointer_type) (slice_type) (map_type)
      (array_type) (function_type) (channel_type) (generic_type)
    ]) @definition.type)

(type_declaration
  (type_alias
    name: (type_identifier) @name) @definition.type)

(method_elem
  name: (field_identifier) @name) @definition.method

(source_file
  (const_declaration
    (const_spec
      name: (identifier) @name) @definition.constant))
