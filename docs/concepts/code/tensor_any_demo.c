/* Runs the four conversions of tensor_any.c on a real tensor object and checks
 * the strong reference count after every step. Exits 1 at the first surprise. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tensor_any.h"

static int g_producer_freed = 0; /* set by the DLPack deleter below */

static void FreeProducerTensor(DLManagedTensor* self) {
  free(self->dl_tensor.data);
  free(self->dl_tensor.shape);
  free(self);
  g_producer_freed = 1;
}

/* A 2x3 float32 tensor as a DLPack producer would hand it over. */
static DLManagedTensor* MakeProducerTensor(void) {
  DLManagedTensor* m = (DLManagedTensor*)calloc(1, sizeof(DLManagedTensor));
  int64_t* shape = (int64_t*)malloc(2 * sizeof(int64_t));
  float* data = (float*)calloc(6, sizeof(float));
  if (m == NULL || shape == NULL || data == NULL) exit(1);
  shape[0] = 2;
  shape[1] = 3;
  m->dl_tensor.data = data;
  m->dl_tensor.device.device_type = kDLCPU;
  m->dl_tensor.ndim = 2;
  m->dl_tensor.dtype.code = kDLFloat;
  m->dl_tensor.dtype.bits = 32;
  m->dl_tensor.dtype.lanes = 1;
  m->dl_tensor.shape = shape;
  m->deleter = FreeProducerTensor;
  return m;
}

/* The strong count is the low 32 bits of the combined counter. */
static uint32_t StrongCount(TVMFFIObjectHandle obj) {
  return (uint32_t)(((TVMFFIObject*)obj)->combined_ref_count & 0xFFFFFFFFu);
}

static void Expect(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "unexpected: %s\n", what);
    exit(1);
  }
}

/* Print the raised error's kind and message, then release it. */
static void ReportRaised(void) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  Expect(err != NULL, "an error was raised");
  TVMFFIErrorCell* cell = (TVMFFIErrorCell*)((char*)err + sizeof(TVMFFIObject));
  printf("  -> returned -1, raised %.*s: %.*s\n", (int)cell->kind.size, cell->kind.data,
         (int)cell->message.size, cell->message.data);
  TVMFFIObjectDecRef(err);
}

int main(void) {
  TVMFFIObjectHandle tensor = NULL;
  Expect(TVMFFITensorFromDLPack(MakeProducerTensor(), 0, 0, &tensor) == 0, "import");
  printf("TVMFFITensorFromDLPack              strong count %u\n", StrongCount(tensor));
  Expect(StrongCount(tensor) == 1, "one owner after import");

  TVMFFIAny owned;
  Expect(OwnedTensorToAny(tensor, &owned) == 0, "OwnedTensorToAny");
  printf("OwnedTensorToAny   (type_index %d)  strong count %u\n", owned.type_index,
         StrongCount(tensor));
  Expect(owned.type_index == kTVMFFITensor && StrongCount(tensor) == 2, "the Any owns one");

  DLTensor* view = NULL;
  Expect(AnyToTensorView(&owned, &view) == 0, "AnyToTensorView");
  printf("AnyToTensorView    (ndim %d, %lldx%lld) strong count %u\n", view->ndim,
         (long long)view->shape[0], (long long)view->shape[1], StrongCount(tensor));
  Expect(StrongCount(tensor) == 2 && (char*)view == (char*)tensor + sizeof(TVMFFIObject),
         "a view takes no reference and points inside the object");

  TVMFFIObjectHandle again = NULL;
  Expect(AnyToOwnedTensor(&owned, &again) == 0 && again == tensor, "AnyToOwnedTensor");
  printf("AnyToOwnedTensor                    strong count %u\n", StrongCount(tensor));
  Expect(StrongCount(tensor) == 3, "a new owner");
  TVMFFIObjectDecRef(again);
  TVMFFIObjectDecRef(owned.v_obj); /* the Any's reference */
  printf("two TVMFFIObjectDecRef              strong count %u\n", StrongCount(tensor));
  Expect(StrongCount(tensor) == 1, "back to the first owner");

  TVMFFIAny borrowed;
  Expect(TensorViewToAny(view, &borrowed) == 0, "TensorViewToAny");
  printf("TensorViewToAny    (type_index %d)   strong count %u\n", borrowed.type_index,
         StrongCount(tensor));
  Expect(borrowed.type_index == kTVMFFIDLTensorPtr && StrongCount(tensor) == 1, "no owner added");
  printf("AnyToOwnedTensor on the view\n");
  Expect(AnyToOwnedTensor(&borrowed, &again) == -1, "a view never becomes owning");
  ReportRaised();

  /* Hand it on as DLPack: the managed tensor keeps the object alive through
   * manager_ctx until its consumer calls the deleter. */
  DLManagedTensor* exported = NULL;
  Expect(TVMFFITensorToDLPack(tensor, &exported) == 0, "TVMFFITensorToDLPack");
  printf("TVMFFITensorToDLPack (manager_ctx %s) strong count %u\n",
         exported->manager_ctx == tensor ? "== tensor" : "!= tensor", StrongCount(tensor));
  Expect(exported->manager_ctx == tensor && StrongCount(tensor) == 2, "the export owns one");
  exported->deleter(exported);
  printf("exported->deleter(exported)         strong count %u\n", StrongCount(tensor));
  Expect(StrongCount(tensor) == 1, "the consumer let go");

  TVMFFIObjectDecRef(tensor);
  printf("last TVMFFIObjectDecRef             producer deleter ran: %s\n",
         g_producer_freed ? "yes" : "no");
  Expect(g_producer_freed, "the producer's deleter runs when the last owner lets go");
  return 0;
}
