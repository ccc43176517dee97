"""``tf.train.Example`` and friends as ``protobuf`` message classes, without TensorFlow.

The descriptors of TensorFlow's ``feature.proto`` and ``example.proto`` are built here
in code (same package name, message names and field numbers), so no ``protoc`` step is
needed. These classes are the independent reference decoder in tests and the engine of
the pure-Python fallback codec.

Examples
--------
>>> from tfsql._proto import Example
>>> ex = Example()
>>> ex.features.feature["label"].int64_list.value.append(3)
>>> Example.FromString(ex.SerializeToString()).features.feature["label"].int64_list.value[0]
3
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto

_POOL = descriptor_pool.DescriptorPool()


def _field(msg, name, number, ftype, *, repeated=False, type_name=None, packed=None, oneof=None):
    f = msg.field.add()
    f.name = name
    f.number = number
    f.type = ftype
    f.label = _F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL
    if type_name:
        f.type_name = type_name
    if packed is not None:
        f.options.packed = packed
    if oneof is not None:
        f.oneof_index = oneof
    return f


def _map_entry(msg, entry_name, value_type):
    entry = msg.nested_type.add()
    entry.name = entry_name
    entry.options.map_entry = True
    _field(entry, "key", 1, _F.TYPE_STRING)
    _field(entry, "value", 2, _F.TYPE_MESSAGE, type_name=value_type)
    return entry


def _build_file() -> descriptor_pb2.FileDescriptorProto:
    fd = descriptor_pb2.FileDescriptorProto()
    fd.name = "tfsql/tensorflow_example.proto"
    fd.package = "tensorflow"
    fd.syntax = "proto3"

    bytes_list = fd.message_type.add(name="BytesList")
    _field(bytes_list, "value", 1, _F.TYPE_BYTES, repeated=True)
    float_list = fd.message_type.add(name="FloatList")
    _field(float_list, "value", 1, _F.TYPE_FLOAT, repeated=True, packed=True)
    int64_list = fd.message_type.add(name="Int64List")
    _field(int64_list, "value", 1, _F.TYPE_INT64, repeated=True, packed=True)

    feature = fd.message_type.add(name="Feature")
    feature.oneof_decl.add(name="kind")
    _field(feature, "bytes_list", 1, _F.TYPE_MESSAGE, type_name=".tensorflow.BytesList", oneof=0)
    _field(feature, "float_list", 2, _F.TYPE_MESSAGE, type_name=".tensorflow.FloatList", oneof=0)
    _field(feature, "int64_list", 3, _F.TYPE_MESSAGE, type_name=".tensorflow.Int64List", oneof=0)

    features = fd.message_type.add(name="Features")
    _map_entry(features, "FeatureEntry", ".tensorflow.Feature")
    _field(features, "feature", 1, _F.TYPE_MESSAGE, repeated=True, type_name=".tensorflow.Features.FeatureEntry")

    feature_list = fd.message_type.add(name="FeatureList")
    _field(feature_list, "feature", 1, _F.TYPE_MESSAGE, repeated=True, type_name=".tensorflow.Feature")

    feature_lists = fd.message_type.add(name="FeatureLists")
    _map_entry(feature_lists, "FeatureListEntry", ".tensorflow.FeatureList")
    _field(
        feature_lists,
        "feature_list",
        1,
        _F.TYPE_MESSAGE,
        repeated=True,
        type_name=".tensorflow.FeatureLists.FeatureListEntry",
    )

    example = fd.message_type.add(name="Example")
    _field(example, "features", 1, _F.TYPE_MESSAGE, type_name=".tensorflow.Features")

    seq = fd.message_type.add(name="SequenceExample")
    _field(seq, "context", 1, _F.TYPE_MESSAGE, type_name=".tensorflow.Features")
    _field(seq, "feature_lists", 2, _F.TYPE_MESSAGE, type_name=".tensorflow.FeatureLists")

    # (not TensorFlow's) a SequenceExample read for its feature lists alone: the context,
    # field 1, is left unparsed (unknown bytes), however many features it holds
    lists_only = fd.message_type.add(name="SequenceExampleFeatureListsOnly")
    _field(lists_only, "feature_lists", 2, _F.TYPE_MESSAGE, type_name=".tensorflow.FeatureLists")
    return fd


_POOL.Add(_build_file())


def _message(name: str):
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"tensorflow.{name}"))


BytesList = _message("BytesList")
FloatList = _message("FloatList")
Int64List = _message("Int64List")
Feature = _message("Feature")
Features = _message("Features")
FeatureList = _message("FeatureList")
FeatureLists = _message("FeatureLists")
Example = _message("Example")
SequenceExample = _message("SequenceExample")
SequenceExampleFeatureListsOnly = _message("SequenceExampleFeatureListsOnly")

__all__ = [
    "BytesList",
    "FloatList",
    "Int64List",
    "Feature",
    "Features",
    "FeatureList",
    "FeatureLists",
    "Example",
    "SequenceExample",
]
