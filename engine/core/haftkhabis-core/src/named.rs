//! Enums whose values have names outside the engine (in a profile, in the codec's field
//! table, on the Python face): [`named_enum!`] declares the enum and each value's name
//! together, once, so nothing else spells them (the binding reads [`name`] and `ALL`).
//!
//! [`name`]: crate::ruleset::Effect::name

/// `named_enum! { /// doc  pub enum E { /// doc  Variant = "name", … } }` declares `E`
/// (`Clone, Copy, Debug, PartialEq, Eq, Hash`) with `E::ALL` (every value, in declaration
/// order), `E::name(self)`, `E::parse(&str)`, and reading an `E` from a profile by its
/// name (serde: an unknown name is an error that lists the known ones).
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        pub enum $enum:ident {
            $($(#[$variant_meta:meta])* $variant:ident = $name:literal,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $enum {
            $($(#[$variant_meta])* $variant,)*
        }

        impl $enum {
            /// Every value, in declaration order.
            pub const ALL: &'static [$enum] = &[$($enum::$variant,)*];

            /// The value's name (in the profiles, the codec's table, the Python face).
            pub fn name(self) -> &'static str {
                match self {
                    $($enum::$variant => $name,)*
                }
            }

            /// The value named `name`.
            pub fn parse(name: &str) -> Option<$enum> {
                Self::ALL.iter().copied().find(|value| value.name() == name)
            }
        }

        impl<'de> serde::Deserialize<'de> for $enum {
            fn deserialize<D: serde::Deserializer<'de>>(reader: D) -> Result<Self, D::Error> {
                let name = String::deserialize(reader)?;
                $enum::parse(&name).ok_or_else(|| {
                    serde::de::Error::unknown_variant(&name, &[$($name,)*])
                })
            }
        }
    };
}
