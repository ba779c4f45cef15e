//! `#[derive(FromToml)]`: reads a struct or a unit-variant enum from a parsed TOML value, through
//! the small non-generic readers of `cudalint::from_toml` (whose `//!` says why not serde).
//!
//! A struct reads as a table: each field under its name (or `rename`), a missing field an error
//! unless it is an `Option` or has a `default`. An enum reads as one of its variants' names (or
//! `rename`s), a string. The attributes, under `#[toml(...)]`:
//!
//! - on a struct: `deny_unknown_fields` (a key no field reads is an error), `rename_all = "kebab-case"`
//!   (the fields' TOML names), `from = "Type"` (read `Type`, then `From` it);
//! - on an enum: `rename_all = "lowercase" | "kebab-case" | "snake_case"` (the variants' names);
//! - on a field: `default` (`Default::default()` when absent), `default = "path"` (a function),
//!   `rename = "name"`;
//! - on a variant: `rename = "name"`.
//!
//! The generated code names `crate::from_toml`: it is for cudalint's own types.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::quote;
use syn::{
    parse_macro_input, Attribute, Data, DeriveInput, Error, Fields, Ident, LitStr, Path, Type,
};

#[proc_macro_derive(FromToml, attributes(toml))]
pub fn derive_from_toml(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand(&input)
        .unwrap_or_else(Error::into_compile_error)
        .into()
}

/// What `#[toml(...)]` says of the type as a whole.
#[derive(Default)]
struct TypeOptions {
    deny_unknown_fields: bool,
    rename_all: Option<Case>,
    from: Option<Type>,
}

/// What `#[toml(...)]` says of one field or variant.
#[derive(Default)]
struct MemberOptions {
    default: Option<FieldDefault>,
    rename: Option<String>,
}

enum FieldDefault {
    Trait,
    Function(Path),
}

#[derive(Clone, Copy)]
enum Case {
    Lower,
    Kebab,
    Snake,
}

fn expand(input: &DeriveInput) -> syn::Result<Tokens> {
    let options = type_options(&input.attrs)?;
    let name = &input.ident;
    if !input.generics.params.is_empty() {
        return Err(Error::new_spanned(
            &input.generics,
            "FromToml: generic types are not supported",
        ));
    }
    let body = match (&options.from, &input.data) {
        (Some(from), _) => quote! {
            let value: #from = crate::from_toml::FromToml::from_toml(node)?;
            ::std::result::Result::Ok(::std::convert::From::from(value))
        },
        (None, Data::Struct(data)) => struct_body(name, &options, &data.fields)?,
        (None, Data::Enum(data)) => enum_body(&options, data.variants.iter())?,
        (None, Data::Union(_)) => {
            return Err(Error::new_spanned(
                input,
                "FromToml: unions are not supported",
            ))
        }
    };
    Ok(quote! {
        impl crate::from_toml::FromToml for #name {
            fn from_toml(
                node: &crate::from_toml::Node<'_>,
            ) -> ::std::result::Result<Self, crate::from_toml::TomlError> {
                #body
            }
        }
    })
}

fn struct_body(name: &Ident, options: &TypeOptions, fields: &Fields) -> syn::Result<Tokens> {
    let Fields::Named(fields) = fields else {
        return Err(Error::new_spanned(
            fields,
            "FromToml: only structs with named fields",
        ));
    };
    let mut keys = Vec::new();
    let mut reads = Vec::new();
    for field in &fields.named {
        let ident = field.ident.as_ref().expect("named fields have names");
        let field_options = member_options(&field.attrs)?;
        let key = match (&field_options.rename, options.rename_all) {
            (Some(rename), _) => rename.clone(),
            (None, case) => rename_field(&ident.to_string(), case),
        };
        let read = match (&field_options.default, is_option(&field.ty)) {
            (_, true) => quote! { table.optional(#key)? },
            (Some(FieldDefault::Trait), false) => quote! { table.or_default(#key)? },
            (Some(FieldDefault::Function(path)), false) => quote! { table.or_else(#key, #path)? },
            (None, false) => quote! { table.required(#key)? },
        };
        reads.push(quote! { #ident: #read });
        keys.push(key);
    }
    let type_name = name.to_string();
    let deny = options
        .deny_unknown_fields
        .then(|| quote! { table.deny_unknown(&[#(#keys),*])?; });
    Ok(quote! {
        let table = crate::from_toml::Table::new(node, #type_name)?;
        #deny
        ::std::result::Result::Ok(Self { #(#reads),* })
    })
}

fn enum_body<'a>(
    options: &TypeOptions,
    variants: impl Iterator<Item = &'a syn::Variant>,
) -> syn::Result<Tokens> {
    let mut names = Vec::new();
    let mut arms = Vec::new();
    for variant in variants {
        if !matches!(variant.fields, Fields::Unit) {
            return Err(Error::new_spanned(variant, "FromToml: only unit variants"));
        }
        let ident = &variant.ident;
        let name = match member_options(&variant.attrs)?.rename {
            Some(rename) => rename,
            None => rename_variant(&ident.to_string(), options.rename_all),
        };
        arms.push(quote! { #name => ::std::result::Result::Ok(Self::#ident), });
        names.push(name);
    }
    Ok(quote! {
        let text = crate::from_toml::string(node)?;
        match text {
            #(#arms)*
            _ => ::std::result::Result::Err(
                crate::from_toml::unknown_variant(node, text, &[#(#names),*]),
            ),
        }
    })
}

fn type_options(attrs: &[Attribute]) -> syn::Result<TypeOptions> {
    let mut options = TypeOptions::default();
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("toml")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("deny_unknown_fields") {
                options.deny_unknown_fields = true;
            } else if meta.path.is_ident("rename_all") {
                let value: LitStr = meta.value()?.parse()?;
                options.rename_all = Some(match value.value().as_str() {
                    "lowercase" => Case::Lower,
                    "kebab-case" => Case::Kebab,
                    "snake_case" => Case::Snake,
                    _ => return Err(Error::new_spanned(value, "FromToml: unknown rename_all")),
                });
            } else if meta.path.is_ident("from") {
                let value: LitStr = meta.value()?.parse()?;
                options.from = Some(value.parse()?);
            } else {
                return Err(meta.error("FromToml: unknown attribute"));
            }
            Ok(())
        })?;
    }
    Ok(options)
}

fn member_options(attrs: &[Attribute]) -> syn::Result<MemberOptions> {
    let mut options = MemberOptions::default();
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("toml")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("default") {
                options.default = Some(if meta.input.peek(syn::Token![=]) {
                    let value: LitStr = meta.value()?.parse()?;
                    FieldDefault::Function(value.parse()?)
                } else {
                    FieldDefault::Trait
                });
            } else if meta.path.is_ident("rename") {
                let value: LitStr = meta.value()?.parse()?;
                options.rename = Some(value.value());
            } else {
                return Err(meta.error("FromToml: unknown attribute"));
            }
            Ok(())
        })?;
    }
    Ok(options)
}

/// `Option<…>` as written (the field may be absent).
fn is_option(ty: &Type) -> bool {
    match ty {
        Type::Path(path) if path.qself.is_none() => path
            .path
            .segments
            .last()
            .is_some_and(|segment| segment.ident == "Option"),
        _ => false,
    }
}

/// A snake_case field name in `case`.
fn rename_field(name: &str, case: Option<Case>) -> String {
    match case {
        Some(Case::Kebab) => name.replace('_', "-"),
        _ => name.to_string(),
    }
}

/// A PascalCase variant name in `case` (as written without one).
fn rename_variant(name: &str, case: Option<Case>) -> String {
    let separator = match case {
        None => return name.to_string(),
        Some(Case::Lower) => None,
        Some(Case::Kebab) => Some('-'),
        Some(Case::Snake) => Some('_'),
    };
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.extend(separator);
        }
        out.extend(c.to_lowercase());
    }
    out
}
